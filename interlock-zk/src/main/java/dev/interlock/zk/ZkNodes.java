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
 * /PATH/ENCODED-NAME/s-N-ID-SEQ  a place for one permit of a semaphore of N
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

    /**
     * The prefix of an attempt's node, to which the server appends the sequence number: {@code w-ID-}
     * for a writer, {@code r-ID-} for a reader, {@code s-LIMIT-ID-} for a permit of a semaphore of
     * LIMIT (in the name, so that one listing tells every place's kind and limit).
     */
    static String prefix(Mode mode, int limit, String attemptId) {
        if (limit > 0) {
            return "s-" + limit + "-" + attemptId + "-";
        }
        return (mode == Mode.EXCLUSIVE ? "w-" : "r-") + attemptId + "-";
    }

    /** One place in a lock's queue, read from its node name; {@code limit} 0 for a plain lock's. */
    record Place(String node, Mode mode, String attemptId, long seq, int limit) {}

    /** The place node {@code child} stands for, or null if it is not an Interlock lock node. */
    static Place place(String child) {
        char kind = child.isEmpty() ? 0 : child.charAt(0);
        if (child.length() < 2 + 1 + 10 || (kind != 'w' && kind != 'r' && kind != 's') || child.charAt(1) != '-') {
            return null;
        }
        int dash = child.lastIndexOf('-');
        if (dash <= 2 || child.length() - dash - 1 < 10) {
            return null;
        }
        long seq;
        int limit = 0;
        int idStart = 2;
        try {
            seq = Long.parseLong(child.substring(dash + 1));
            if (kind == 's') {
                int limitEnd = child.indexOf('-', 2);
                if (limitEnd >= dash) {
                    return null;
                }
                limit = Integer.parseInt(child.substring(2, limitEnd));
                idStart = limitEnd + 1;
            }
        } catch (NumberFormatException e) {
            return null;
        }
        if (kind == 's' && limit < 1 || idStart >= dash) {
            return null;
        }
        return new Place(child, kind == 'r' ? Mode.SHARED : Mode.EXCLUSIVE, child.substring(idStart, dash), seq, limit);
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
     * every place before it, for a reader every writer or permit before it; for a permit of N,
     * nothing if it is among the first N and every place before it is a permit of N, else every
     * place before it (holders and the waiters it must not overtake). Empty: it holds.
     */
    static List<Place> blockers(List<Place> queue, int at) {
        Place me = queue.get(at);
        if (me.limit() > 0) {
            if (at < me.limit() && allPermitsOf(me.limit(), queue.subList(0, at))) {
                return List.of();
            }
            return List.copyOf(queue.subList(0, at));
        }
        List<Place> out = new ArrayList<>(2);
        for (int i = 0; i < at; i++) {
            if (me.mode() == Mode.EXCLUSIVE || queue.get(i).mode() == Mode.EXCLUSIVE) {
                out.add(queue.get(i));
            }
        }
        return out;
    }

    private static boolean allPermitsOf(int limit, List<Place> places) {
        for (Place p : places) {
            if (p.limit() != limit) {
                return false;
            }
        }
        return true;
    }

    /**
     * The places that hold the lock: the first N permits of N, or the first writer, or every reader
     * before the first writer or permit. Found from the head, so it costs no more than the holders.
     */
    static List<Place> holders(List<Place> queue) {
        if (queue.isEmpty()) {
            return List.of();
        }
        Place head = queue.get(0);
        if (head.limit() == 0 && head.mode() == Mode.EXCLUSIVE) {
            return List.of(head);
        }
        int end = 1;
        int most = head.limit() > 0 ? head.limit() : Integer.MAX_VALUE;
        while (end < queue.size()
                && end < most
                && queue.get(end).limit() == head.limit()
                && queue.get(end).mode() == head.mode()) {
            end++;
        }
        return List.copyOf(queue.subList(0, end));
    }

    /**
     * The nodes a waiter at {@code at} watches, so that a release wakes only the waiters it may
     * admit (no herd): a writer its immediate predecessor, a reader the last writer or permit
     * before it; empty if nothing blocks it.
     *
     * <p>A permit of N watches the N places before it (all of them if fewer). Why that is enough:
     * whether it may hold depends only on the places before it, which change only by deletions
     * (new places queue behind it). A deletion inside those N wakes it. A deletion further ahead
     * moves it and its N predecessors one step forward together, so it still watches exactly the
     * N places before it; and since it had N or more places before it and still has N or more
     * (the ones it watches), it still may not hold. So it sleeps only while it may not hold, and a
     * release wakes at most N waiters (those within N places behind it), not every waiter.
     * Watching only the place N ahead would not do: with N = 2 and queue [a b c d], c watching a
     * and d watching b, b's release wakes d (now third, still waiting) but not c (now second, free
     * to hold).
     */
    static List<Place> watched(List<Place> queue, int at, List<Place> blockers) {
        if (blockers.isEmpty()) {
            return List.of();
        }
        Place me = queue.get(at);
        if (me.limit() > 0) {
            return List.copyOf(queue.subList(Math.max(0, at - me.limit()), at));
        }
        return List.of(blockers.get(blockers.size() - 1));
    }

    /**
     * The data of a place's node, one {@code key=value} per line: the owner id, the mode, the
     * semaphore limit (0 for a plain lock) and the session timeout in ms (how long the place can
     * outlive a holder that died, shown by status as its lease).
     */
    static byte[] data(String ownerId, Mode mode, int limit, long sessionMs) {
        return ("owner=" + ownerId + "\nmode=" + mode.shortName() + "\nlimit=" + limit + "\nsession=" + sessionMs
                        + "\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The owner id in a place node's data, or null. */
    static String owner(byte[] data) {
        return field(data, "owner=");
    }

    /** The session timeout in ms in a place node's data, or -1 (a node made before it was written). */
    static long sessionMs(byte[] data) {
        String ms = field(data, "session=");
        try {
            return ms == null ? -1 : Long.parseLong(ms);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String field(byte[] data, String key) {
        if (data == null) {
            return null;
        }
        for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith(key)) {
                return line.substring(key.length());
            }
        }
        return null;
    }
}
