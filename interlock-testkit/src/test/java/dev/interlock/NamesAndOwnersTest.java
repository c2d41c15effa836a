package dev.interlock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.interlock.spi.support.LockNames;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NamesAndOwnersTest {
    @Test
    void validate_acceptsAnyPrintableUnicode() {
        for (String n :
                new String[] {"a", "..", "/", "../../etc/passwd", "日本語", "🔒", " ", "a b", "\u00a0", "x".repeat(1024)
                }) {
            assertThat(LockNames.validate(n)).isEqualTo(n);
        }
    }

    @Test
    void validate_rejectsWithTheRuleAndPosition() {
        assertThatThrownBy(() -> LockNames.validate("ab\u0007"))
                .isInstanceOf(InvalidLockNameException.class)
                .hasMessage("lock name must not contain control characters, found U+0007 at index 2");
        assertThatThrownBy(() -> LockNames.validate("\u0085")).hasMessageContaining("U+0085");
        assertThatThrownBy(() -> LockNames.validate("a\u007f")).hasMessageContaining("U+007F");
        assertThatThrownBy(() -> LockNames.validate("\uDC00")).hasMessageContaining("unpaired surrogate at index 0");
    }

    @Test
    void quote_escapesWhatCannotBePrinted() {
        assertThat(LockNames.quote("a\nb")).isEqualTo("'a\\u000ab'");
    }

    @Test
    void owner_isUniquePerAcquisition_andRoundTrips() {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 10_000; i++) {
            Owner o = Owner.newAcquisition();
            assertThat(Owner.parse(o.id())).isEqualTo(o);
            ids.add(o.id());
        }
        assertThat(ids).hasSize(10_000);
        Owner o = Owner.newAcquisition();
        assertThat(o.pid()).isEqualTo(ProcessHandle.current().pid());
        assertThat(o.processStart()).isPositive();
        assertThat(o.host()).isNotEmpty().doesNotContain(":");
    }

    @Test
    void owner_parse_rejectsOtherForms() {
        assertThatThrownBy(() -> Owner.parse("host:12")).hasMessageContaining("host:pid:start:nonce");
        assertThatThrownBy(() -> Owner.parse("host:x:1:n")).hasMessageContaining("pid and start are numbers");
    }

    @Test
    void mode_parse() {
        assertThat(Mode.parse("sh")).isEqualTo(Mode.SHARED);
        assertThat(Mode.parse("EXCLUSIVE")).isEqualTo(Mode.EXCLUSIVE);
        assertThatThrownBy(() -> Mode.parse("read")).hasMessageContaining("SH (shared) or EX (exclusive)");
    }
}
