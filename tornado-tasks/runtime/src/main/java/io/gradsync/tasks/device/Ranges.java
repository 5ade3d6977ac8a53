package io.gradsync.tasks.device;

/**
 * Bounds checks done in Java before any native call, so that misuse is an exception, not a crash.
 *
 * <p>Thread-safety: stateless static methods, callable from any thread at once.
 */
final class Ranges {
    private Ranges() {
    }

    static void check(long offset, long bytes, long size, String what) {
        if (offset < 0 || bytes < 0 || offset > size || bytes > size - offset) {
            throw new IndexOutOfBoundsException(what + ": range [" + offset + ", " + offset + " + " + bytes
                    + ") is outside a buffer of " + size + " bytes");
        }
    }
}
