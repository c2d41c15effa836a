package dev.interlock.file.flock;

import dev.interlock.Mode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The text an Interlock holder writes into a {@code flock:} lock file, only while it holds the
 * lock (exclusive holders alone; shared holders while they also hold the gate):
 * <pre>
 * interlock-flock/1 token=00001763712345678901
 * name .x-...                       (hashed file names only: the encoded full name)
 * EX 1763712345678901 host:pid:start:nonce 1763712345678
 * </pre>
 * The first line has a fixed width so the token can be rewritten in place. Record lines are
 * {@code MODE TOKEN OWNER SINCE-EPOCH-MS}. The contents never decide who holds the lock (the
 * kernel does); they carry the fencing-token counter and holder details for {@code status}.
 */
final class LockFileContent {
    static final String MAGIC = "interlock-flock/";
    static final String HEADER_PREFIX = "interlock-flock/1 token=";
    static final int TOKEN_DIGITS = 20;
    static final int HEADER_LENGTH = HEADER_PREFIX.length() + TOKEN_DIGITS + 1;

    enum Kind {
        /** Empty file: ours to initialise. */
        EMPTY,
        /** Our format, parsed. */
        OURS,
        /** Starts like ours but does not parse (truncated, damaged): ours to repair. */
        DAMAGED,
        /** Somebody else's content (e.g. a script wrote its pid): never overwritten. */
        FOREIGN
    }

    record Record(Mode mode, long token, String ownerId, long sinceMillis) {
        String line() {
            return mode.shortName() + ' ' + token + ' ' + ownerId + ' ' + sinceMillis + '\n';
        }
    }

    final Kind kind;
    final long token;
    final Optional<String> storedName;
    final List<Record> records;

    private LockFileContent(Kind kind, long token, Optional<String> storedName, List<Record> records) {
        this.kind = kind;
        this.token = token;
        this.storedName = storedName;
        this.records = records;
    }

    static LockFileContent parse(byte[] buf, int len) {
        if (len <= 0) {
            return new LockFileContent(Kind.EMPTY, 0, Optional.empty(), List.of());
        }
        String text = new String(buf, 0, len, StandardCharsets.UTF_8);
        if (!text.startsWith(MAGIC)) {
            return new LockFileContent(Kind.FOREIGN, 0, Optional.empty(), List.of());
        }
        if (len < HEADER_LENGTH || !text.startsWith(HEADER_PREFIX) || text.charAt(HEADER_LENGTH - 1) != '\n') {
            return new LockFileContent(Kind.DAMAGED, 0, Optional.empty(), List.of());
        }
        long token;
        try {
            token = Long.parseLong(text.substring(HEADER_PREFIX.length(), HEADER_LENGTH - 1));
        } catch (NumberFormatException e) {
            return new LockFileContent(Kind.DAMAGED, 0, Optional.empty(), List.of());
        }
        Optional<String> name = Optional.empty();
        List<Record> records = new ArrayList<>();
        int pos = HEADER_LENGTH;
        while (pos < text.length()) {
            int nl = text.indexOf('\n', pos);
            if (nl < 0) {
                break; // a partial last line (the file was cut): ignore it
            }
            String line = text.substring(pos, nl);
            pos = nl + 1;
            if (line.startsWith("name ")) {
                name = NameMapping.decode(line.substring(5));
                continue;
            }
            String[] f = line.split(" ");
            if (f.length != 4) {
                continue;
            }
            try {
                records.add(new Record(Mode.parse(f[0]), Long.parseLong(f[1]), f[2], Long.parseLong(f[3])));
            } catch (IllegalArgumentException ignored) {
                // a damaged record line only loses its status details
            }
        }
        return new LockFileContent(Kind.OURS, token, name, records);
    }

    static byte[] render(long token, Optional<String> name, List<Record> records) {
        StringBuilder sb = new StringBuilder(HEADER_LENGTH + 96 * (records.size() + 1));
        sb.append(HEADER_PREFIX);
        String t = Long.toString(token);
        for (int i = t.length(); i < TOKEN_DIGITS; i++) {
            sb.append('0');
        }
        sb.append(t).append('\n');
        name.ifPresent(n -> sb.append("name ").append(NameMapping.encode(n)).append('\n'));
        for (Record r : records) {
            sb.append(r.line());
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }
}
