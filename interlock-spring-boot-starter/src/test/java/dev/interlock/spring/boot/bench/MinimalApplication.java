package dev.interlock.spring.boot.bench;

import java.lang.management.ManagementFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The smallest Boot application: auto-configuration on, no beans of its own, no web server. With
 * the starter on its class path and {@code --interlock.uri=...} it has a lock space, a ShedLock
 * provider and a registry where those libraries are present. Prints {@code ready MILLIS CPU_MILLIS},
 * the JVM's uptime when the context is refreshed and the CPU time the process had used by then
 * (all its threads: less disturbed than the uptime by other processes on a busy machine), then
 * exits. Used by {@link StartupCost}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class MinimalApplication {
    public static void main(String[] args) {
        run(MinimalApplication.class, args);
    }

    static void run(Class<?> application, String[] args) {
        SpringApplication app = new SpringApplication(application);
        app.setLogStartupInfo(false);
        try (ConfigurableApplicationContext ctx = app.run(args)) {
            long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
            long cpu = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                            .getProcessCpuTime()
                    / 1_000_000;
            System.out.println("ready " + uptime + " " + cpu + " beans " + ctx.getBeanDefinitionCount());
        }
    }
}
