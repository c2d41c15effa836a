package dev.interlock.spring.boot.bench;

import dev.interlock.Interlock;
import dev.interlock.LockSpace;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * {@link MinimalApplication} with the lock space written by hand, as without the starter:
 * {@code @Bean LockSpace} from {@code Interlock.open(uri)}. The baseline that shows what the
 * starter costs beyond the lock space itself. Run with {@code --bench.uri=...}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ByHandApplication {
    public static void main(String[] args) {
        MinimalApplication.run(ByHandApplication.class, args);
    }

    @Bean(destroyMethod = "close")
    LockSpace lockSpace(@Value("${bench.uri}") String uri) {
        return Interlock.open(uri);
    }
}
