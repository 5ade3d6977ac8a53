package io.gradsync.tasks.jvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * This process's memory map (Linux's {@code /proc/self/maps}): what a raw host address from a user
 * is checked against before gradsync touches it, so that a wrong address is an exception, not a
 * crash of the JVM.
 */
final class ProcessMappings {
    private static final Path MAPS = Path.of("/proc/self/maps");

    private ProcessMappings() {
    }

    /**
     * Checks that {@code [address, address + bytes)} lies in mappings that are readable and writable,
     * back to back.
     *
     * @throws IllegalArgumentException naming {@code what} and the first byte that is not mapped, or not writable
     * @throws UnsupportedOperationException where the process has no {@code /proc/self/maps} to check against
     */
    static void requireReadWrite(long address, long bytes, String what) {
        if (!Files.isReadable(MAPS)) {
            throw new UnsupportedOperationException(what + ": this system has no " + MAPS + " to check a raw address against; "
                    + "wrap a MemorySegment instead (JvmDevice.wrap(MemorySegment))");
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(MAPS);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + MAPS, e);
        }
        long end = address + bytes;
        long covered = address; // every byte below this one is mapped readable and writable
        for (String line : lines) { // sorted by address
            int dash = line.indexOf('-');
            int space = line.indexOf(' ');
            if (dash < 0 || space < dash) {
                continue;
            }
            long start = Long.parseUnsignedLong(line, 0, dash, 16);
            long stop = Long.parseUnsignedLong(line, dash + 1, space, 16);
            if (Long.compareUnsigned(stop, covered) <= 0) {
                continue;
            }
            if (Long.compareUnsigned(start, covered) > 0) {
                break; // a gap at `covered`
            }
            if (line.charAt(space + 1) != 'r' || line.charAt(space + 2) != 'w') {
                throw new IllegalArgumentException(what + ": byte 0x" + Long.toHexString(covered) + " is mapped "
                        + line.substring(space + 1, space + 5) + ", not readable and writable");
            }
            covered = stop;
            if (Long.compareUnsigned(covered, end) >= 0) {
                return;
            }
        }
        throw new IllegalArgumentException(what + ": byte 0x" + Long.toHexString(covered) + " is not mapped in this process");
    }
}
