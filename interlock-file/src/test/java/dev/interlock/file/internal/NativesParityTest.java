package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Both native paths have every function: each group of {@link Natives} is published whole by its
 * {@code Libc*} class (same name, parameters and result) and implemented whole by JNA and, on the
 * JDK that can load it, by FFM, with nothing more. A function added to one path only fails here.
 */
class NativesParityTest {
    private static final Class<?>[][] GROUPS = {
        {Natives.Files.class, LibcFiles.class, JnaNatives.Files.class},
        {Natives.Processes.class, LibcProcesses.class, JnaNatives.Processes.class},
        {Natives.Events.class, LibcEvents.class, JnaNatives.Events.class},
        {Natives.Signals.class, LibcSignals.class, JnaNatives.Signals.class},
    };

    private static Set<String> signatures(Method[] methods, boolean wantStatic) {
        Set<String> out = new TreeSet<>();
        for (Method m : methods) {
            if (Modifier.isPublic(m.getModifiers())
                    && Modifier.isStatic(m.getModifiers()) == wantStatic
                    && !m.isSynthetic()) {
                out.add(m.getReturnType().getSimpleName() + " " + m.getName() + Arrays.toString(m.getParameterTypes()));
            }
        }
        return out;
    }

    /** Used inside the package only: getdents64 into the per-thread buffer of LibcFiles.readDirectory. */
    private static final Set<String> UNPUBLISHED = Set.of("long getdents64[int, class [B]");

    @Test
    void everyFunction_isPublishedByItsLibcClass() {
        for (Class<?>[] g : GROUPS) {
            Set<String> wanted = signatures(g[0].getMethods(), false);
            wanted.removeAll(UNPUBLISHED);
            assertThat(signatures(g[1].getDeclaredMethods(), true))
                    .as(g[1].getSimpleName() + " publishes " + g[0].getName())
                    .containsAll(wanted);
        }
    }

    @Test
    void jna_implementsEveryFunction_andNoOther() {
        for (Class<?>[] g : GROUPS) {
            assertThat(signatures(g[2].getDeclaredMethods(), false))
                    .as(g[2].getName())
                    .isEqualTo(signatures(g[0].getMethods(), false));
        }
    }

    @Test
    void ffm_implementsEveryFunction_andNoOther() throws Exception {
        assumeTrue(Runtime.version().feature() >= 22, "FFM runs on JDK 22+");
        Class<?> ffm;
        try {
            ffm = Class.forName(Libc.FFM_CLASS);
        } catch (ClassNotFoundException e) {
            assumeTrue(false, "no FFM classes here (a single-release build, or classes read from a directory)");
            return;
        }
        for (Class<?>[] g : GROUPS) {
            Class<?> impl = Class.forName(ffm.getName() + "$" + g[0].getSimpleName());
            assertThat(signatures(impl.getDeclaredMethods(), false))
                    .as(impl.getName())
                    .isEqualTo(signatures(g[0].getMethods(), false));
        }
        assertThat(signatures(ffm.getDeclaredMethods(), false))
                .isEqualTo(signatures(Natives.class.getMethods(), false));
    }

    @Test
    void theEventGroup_hasPollAndEventfd_withTheirSignatures() throws Exception {
        assertThat(LibcEvents.class
                        .getMethod("poll", byte[].class, long.class, int.class)
                        .getReturnType())
                .isEqualTo(int.class);
        assertThat(LibcEvents.class.getMethod("eventfd", int.class, int.class).getReturnType())
                .isEqualTo(int.class);
        assertThat(LibcEvents.EFD_CLOEXEC).isEqualTo(02000000);
        assertThat(LibcEvents.EFD_NONBLOCK).isEqualTo(04000);
        assertThat(LibcEvents.POLLIN).isEqualTo(1);
    }
}
