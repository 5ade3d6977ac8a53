package io.gradsync.sync.backend;

/** Release helpers for synchronizers tearing down native resources. */
public final class Resources {
    private Resources() {
    }

    /** Closes {@code c} if present, ignoring its failure: used on the way out, after the first failure is kept. */
    public static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // releasing on the way out; the first failure is already being reported
            }
        }
    }
}
