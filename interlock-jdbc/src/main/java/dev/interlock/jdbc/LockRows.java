package dev.interlock.jdbc;

import dev.interlock.Mode;
import dev.interlock.jdbc.LockStore.Holder;
import dev.interlock.jdbc.LockStore.State;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Rows of the three tables read into {@link State}s: the lock row, the live shared holders of its
 * current epoch (rows of an earlier epoch are dead), and the live places of the line in order.
 */
final class LockRows {
    private LockRows() {}

    static State state(ResultSet rs, Map<String, Long> epochs) throws SQLException {
        epochs.put(rs.getString("name_key"), rs.getLong("epoch"));
        List<Holder> holders = new ArrayList<>();
        long token = rs.getLong("token");
        if (rs.getInt("held") == 1) {
            holders.add(new Holder(
                    Mode.EXCLUSIVE,
                    rs.getString("owner"),
                    token,
                    rs.getLong("left_ms"),
                    rs.getLong("age_ms"),
                    rs.getLong("lease_ms"),
                    false));
        }
        Optional<Holder> waiter = Optional.empty();
        if (rs.getInt("queued") == 1) {
            waiter = Optional.of(
                    new Holder(Mode.EXCLUSIVE, rs.getString("waiter"), 0, rs.getLong("waiter_left_ms"), -1, -1, true));
        }
        return new State(rs.getString("name"), token, holders, waiter, List.of(), rs.getInt("permit_limit"));
    }

    /** Reads live shared holders, keeping those of their name's current epoch (the others are dead). */
    static void readHolders(ResultSet rs, Map<String, List<Holder>> readers, Map<String, Long> epochs)
            throws SQLException {
        while (rs.next()) {
            String k = rs.getString("name_key");
            Long e = epochs.get(k);
            if (e != null && e == rs.getLong("epoch")) {
                readers.computeIfAbsent(k, x -> new ArrayList<>())
                        .add(new Holder(
                                Mode.SHARED,
                                rs.getString("owner"),
                                rs.getLong("token"),
                                rs.getLong("left_ms"),
                                rs.getLong("age_ms"),
                                rs.getLong("lease_ms"),
                                false));
            }
        }
    }

    /**
     * The lock row's state with its live shared holders and its line. Under a limit the shared
     * holders are permit holders, each holding its permit alone: shown as exclusive. The limit is
     * in force only while one of them lives.
     */
    static State withReaders(State s, List<Holder> readers, List<Holder> line) {
        int limit = readers.isEmpty() ? 0 : s.limit();
        List<Holder> all = new ArrayList<>(s.holders());
        for (Holder r : readers) {
            all.add(
                    limit > 0
                            ? new Holder(
                                    Mode.EXCLUSIVE, r.owner(), r.token(), r.leftMs(), r.ageMs(), r.leaseMs(), false)
                            : r);
        }
        return new State(s.name(), s.lastToken(), all, s.waiter(), line, limit);
    }

    /** Reads live places of the line (ordered by name key, then ticket), by name key. */
    static void readLine(ResultSet rs, Map<String, List<Holder>> line) throws SQLException {
        while (rs.next()) {
            Mode mode = rs.getInt("writer") == 1 ? Mode.EXCLUSIVE : Mode.SHARED;
            line.computeIfAbsent(rs.getString("name_key"), x -> new ArrayList<>())
                    .add(new Holder(mode, rs.getString("owner"), 0, rs.getLong("left_ms"), -1, -1, true));
        }
    }
}
