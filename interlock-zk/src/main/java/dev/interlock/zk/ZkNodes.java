package dev.interlock.zk;

import dev.interlock.Mode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The node layout of a {@code zk:} space and the queue rule read from it; no ZooKeeper calls.
 *
 * <pre>
 * /PATH                          the space (persistent; data {@value #MARKER})
 * /PATH/ENCODED-NAME             one lock name (a container node: the servers remove it once empty)
 * /PATH/ENCODED-NAME/w-ID-SEQ    a writer's place, ephemeral and sequential (r- for a reader)
 * </pre>
 *
 * <p>A name is encoded so that the mapping is injective and every node name is legal: UTF-8
 * bytes, with everything but {@code A-Z a-z 0-9 _ -} written {@code %XX} (so {@code /}, {@code .}
 * and {@code ..} never appear raw). ID is the attempt's random id, which finds the node again
 * after a create whose answer was lost; SEQ is the server's 10-digit sequence number, the queue
 * order.
 */
final class ZkNodes {
    /** The data of a space's root node: what tells an Interlock space from another application's node. */
    static final String MARKER = "interlock-zk 1";

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private ZkNodes() {}

    /** The node name of lock {@code name}. */
    static String encode(String name) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-') {
                sb.append((char) c);
            } else {
                sb.append('%').append(HEX[c >> 4]).append(HEX[c & 15]);
            }
        }
        return sb.toString();
    }

    /** The lock name of node {@code encoded}, or null if it is no encoding of a name. */
    static String decode(String encoded) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(encoded.length());
        for (int i = 0; i < encoded.length(); i++) {
            char c = encoded.charAt(i);
            if (c == '%') {
                if (i + 2 >= encoded.length()) {
                    return null;
                }
                int hi = Character.digit(encoded.charAt(i + 1), 16);
                int lo = Character.digit(encoded.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out.write(hi << 4 | lo);
                i += 2;
            } else if ((c >= 'A' && c <= 'Z')
                    || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9')
                    || c == '_'
                    || c == '-') {
                out.write(c);
            } else {
                return null;
            }
        }
        String name = new String(out.toByteArray(), StandardCharsets.UTF_8);
        return encode(name).equals(encoded) ? name : null;
    }

    /** The prefix of an attempt's node, to which the server appends the sequence number. */
    static String prefix(Mode mode, String attemptId) {
        return (mode == Mode.EXCLUSIVE ? "w-" : "r-") + attemptId + "-";
    }

    /** One place in a lock's queue, read from its node name. */
    record Place(String node, Mode mode, String attemptId, long seq) {}

    /** The place node {@code child} stands for, or null if it is not an Interlock lock node. */
    static Place place(String child) {
        if (child.length() < 2 + 1 + 10
                || (child.charAt(0) != 'w' && child.charAt(0) != 'r')
                || child.charAt(1) != '-') {
            return null;
        }
        int dash = child.lastIndexOf('-');
        if (dash <= 2 || child.length() - dash - 1 < 10) {
            return null;
        }
        long seq;
        try {
            seq = Long.parseLong(child.substring(dash + 1));
        } catch (NumberFormatException e) {
            return null;
        }
        return new Place(child, child.charAt(0) == 'w' ? Mode.EXCLUSIVE : Mode.SHARED, child.substring(2, dash), seq);
    }

    /** Places in queue order. @throws IllegalStateException naming a child that is no lock node */
    static List<Place> queue(List<String> children) {
        List<Place> out = new ArrayList<>(children.size());
        for (String c : children) {
            Place p = place(c);
            if (p == null) {
                throw new IllegalStateException(c);
            }
            out.add(p);
        }
        out.sort(Comparator.comparingLong(Place::seq));
        return out;
    }

    /**
     * The places that keep place {@code at} of {@code queue} from holding the lock: for a writer
     * every place before it, for a reader every writer before it. Empty: it holds the lock.
     */
    static List<Place> blockers(List<Place> queue, int at) {
        Mode mode = queue.get(at).mode();
        List<Place> out = new ArrayList<>(2);
        for (int i = 0; i < at; i++) {
            if (mode == Mode.EXCLUSIVE || queue.get(i).mode() == Mode.EXCLUSIVE) {
                out.add(queue.get(i));
            }
        }
        return out;
    }

    /**
     * The one node a waiter watches (no herd): a writer its immediate predecessor, a reader the
     * last writer before it. Null if nothing blocks it.
     */
    static Place watched(List<Place> blockers) {
        return blockers.isEmpty() ? null : blockers.get(blockers.size() - 1);
    }

    /** The data of a place's node: the owner id, the mode and the lease asked for, one per line. */
    static byte[] data(String ownerId, Mode mode) {
        return ("owner=" + ownerId + "\nmode=" + mode.shortName() + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The owner id in a place node's data, or null. */
    static String owner(byte[] data) {
        if (data == null) {
            return null;
        }
        for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("owner=")) {
                return line.substring(6);
            }
        }
        return null;
    }
}
