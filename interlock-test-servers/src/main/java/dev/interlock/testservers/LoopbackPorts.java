package dev.interlock.testservers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free ports on the loopback interface, for servers that the tests start. */
public final class LoopbackPorts {
    private LoopbackPorts() {}

    /** A port free at the time of the call (a server started on it may still lose a race: retry). */
    public static int free() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
