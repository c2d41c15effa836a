package dev.interlock.cli;

/** A minimal JSON writer for {@code --json} output (no dependency). Not validating: callers nest correctly. */
final class Json {
    private final StringBuilder sb = new StringBuilder();
    private boolean needComma;

    Json beginObject() {
        comma();
        sb.append('{');
        needComma = false;
        return this;
    }

    Json endObject() {
        sb.append('}');
        needComma = true;
        return this;
    }

    Json beginArray() {
        comma();
        sb.append('[');
        needComma = false;
        return this;
    }

    Json endArray() {
        sb.append(']');
        needComma = true;
        return this;
    }

    /** Starts a member of an object; follow with a value, object or array. */
    Json name(String name) {
        comma();
        string(name);
        sb.append(':');
        needComma = false;
        return this;
    }

    Json value(String v) {
        comma();
        if (v == null) {
            sb.append("null");
        } else {
            string(v);
        }
        needComma = true;
        return this;
    }

    Json value(long v) {
        comma();
        sb.append(v);
        needComma = true;
        return this;
    }

    Json value(boolean v) {
        comma();
        sb.append(v);
        needComma = true;
        return this;
    }

    Json nullValue() {
        comma();
        sb.append("null");
        needComma = true;
        return this;
    }

    private void comma() {
        if (needComma) {
            sb.append(',');
        }
    }

    private void string(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\r':
                    sb.append("\\r");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                case '\b':
                    sb.append("\\b");
                    break;
                case '\f':
                    sb.append("\\f");
                    break;
                default:
                    if (c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029') {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    @Override
    public String toString() {
        return sb.toString();
    }
}
