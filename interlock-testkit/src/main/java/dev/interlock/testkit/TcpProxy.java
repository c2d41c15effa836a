package dev.interlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * A TCP forwarder of the test's own, between clients and one server on loopback, that can go silent
 * ({@link #blackhole()}: connections stay open, nothing passes, as in a network partition) or
 * reset every connection ({@link #dropConnections()}: as a server that died and a client that may
 * connect again at once).
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile CountDownLatch gate = open();
    private volatile boolean closed;

    /** Forwards a new loopback port to {@code targetPort} on loopback. */
    public TcpProxy(int targetPort) throws IOException {
        this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "proxy-accept");
        t.setDaemon(true);
        t.start();
    }

    private static CountDownLatch open() {
        CountDownLatch l = new CountDownLatch(1);
        l.countDown();
        return l;
    }

    /** The port clients connect to. */
    public int port() {
        return listener.getLocalPort();
    }

    /** Nothing passes any more, in either direction, on old or new connections, until {@link #restore()}. */
    public void blackhole() {
        if (gate.getCount() == 0) {
            gate = new CountDownLatch(1);
        }
    }

    /** Lets everything pass again (held bytes are forwarded). */
    public void restore() {
        gate.countDown();
    }

    /** Resets every connection open now. */
    public void dropConnections() {
        for (Socket s : sockets) {
            try {
                s.setSoLinger(true, 0);
                s.close();
            } catch (IOException e) {
                // closed already
            }
        }
        sockets.clear();
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket();
                try {
                    server.connect(target);
                } catch (IOException e) {
                    client.close();
                    continue;
                }
                sockets.add(client);
                sockets.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[16384];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            gate.await();
                            out.write(buf, 0, n);
                            out.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // a side closed: close the other
                    } finally {
                        try {
                            from.close();
                            to.close();
                        } catch (IOException e) {
                            // closed already
                        }
                    }
                },
                "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        restore();
        listener.close();
        dropConnections();
    }
}
