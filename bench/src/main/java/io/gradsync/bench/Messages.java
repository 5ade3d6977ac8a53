package io.gradsync.bench;

/** Failures reported in one line: tables and skip notes have room for no more. */
public final class Messages {
    private Messages() {
    }

    /** The exception's message up to its first line break (its type where it has no message). */
    public static String firstLine(Throwable e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        return m.lines().findFirst().orElse(m);
    }
}
