package dev.interlock.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One statement of the lock store, written with named parameters ({@code :owner}, {@code :lease})
 * and turned once into the {@code ?} form JDBC takes, with the order in which it binds the
 * values of an {@link Args}: so no call site lists positional values that must match the text.
 * The statements contain no {@code ::} casts or quoted colons, which this form would misread.
 */
final class NamedSql {
    private static final Pattern PARAM = Pattern.compile(":([a-z]+)");

    /** The values a statement may name; a statement binds those it names, in its order. */
    enum Param {
        KEY,
        NAME,
        OWNER,
        LEASE,
        TICKET,
        EPOCH,
        TOKEN,
        LIMIT
    }

    /**
     * The values of one operation. Strings a statement names must be given; numbers default to 0.
     *
     * @param lease milliseconds
     * @param limit a semaphore's number of permits (0: a plain lock)
     */
    record Args(String key, String name, String owner, long lease, long ticket, long epoch, long token, int limit) {
        static Args of(String key) {
            return new Args(key, null, null, 0, 0, 0, 0, 0);
        }

        Args limit(int n) {
            return new Args(key, name, owner, lease, ticket, epoch, token, n);
        }

        Args name(String n) {
            return new Args(key, n, owner, lease, ticket, epoch, token, limit);
        }

        Args owner(String o) {
            return new Args(key, name, o, lease, ticket, epoch, token, limit);
        }

        Args lease(long ms) {
            return new Args(key, name, owner, ms, ticket, epoch, token, limit);
        }

        Args ticket(long t) {
            return new Args(key, name, owner, lease, t, epoch, token, limit);
        }

        Args epoch(long e) {
            return new Args(key, name, owner, lease, ticket, e, token, limit);
        }

        Args token(long t) {
            return new Args(key, name, owner, lease, ticket, epoch, t, limit);
        }
    }

    /** As written, with named parameters: for composing a larger statement of it. */
    final String named;
    /** With {@code ?} for each parameter, for JDBC. */
    final String text;

    private final Param[] params;

    private NamedSql(String named, String text, Param[] params) {
        this.named = named;
        this.text = text;
        this.params = params;
    }

    static NamedSql of(String named) {
        Matcher m = PARAM.matcher(named);
        StringBuilder out = new StringBuilder();
        List<Param> order = new ArrayList<>();
        while (m.find()) {
            order.add(Param.valueOf(m.group(1).toUpperCase(Locale.ROOT)));
            m.appendReplacement(out, "?");
        }
        m.appendTail(out);
        return new NamedSql(named, out.toString(), order.toArray(new Param[0]));
    }

    /** This statement with {@code text} in place of its text, and the same parameters (a wrapper such as RETURNING). */
    NamedSql wrapped(String wrappedText) {
        return new NamedSql(null, wrappedText, params);
    }

    void bind(PreparedStatement ps, Args a) throws SQLException {
        for (int i = 0; i < params.length; i++) {
            switch (params[i]) {
                case KEY -> ps.setString(i + 1, required(a.key(), "key"));
                case NAME -> ps.setString(i + 1, required(a.name(), "name"));
                case OWNER -> ps.setString(i + 1, required(a.owner(), "owner"));
                case LEASE -> ps.setLong(i + 1, a.lease());
                case TICKET -> ps.setLong(i + 1, a.ticket());
                case EPOCH -> ps.setLong(i + 1, a.epoch());
                case TOKEN -> ps.setLong(i + 1, a.token());
                case LIMIT -> ps.setInt(i + 1, a.limit());
            }
        }
    }

    private String required(String value, String what) {
        if (value == null) {
            throw new IllegalStateException("no " + what + " given for a statement that names it: " + text);
        }
        return value;
    }

    @Override
    public String toString() {
        return text;
    }
}
