package io.gradsync.tasks.cuda;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** Whether an address range lies in this process's readable memory, from {@code /proc/self/maps} (Linux). */
final class ProcessMemory {
    private static final Path MAPS = Path.of("/proc/self/maps");

    private ProcessMemory() {
    }

    /** True when {@code [address, address + bytes)} is inside one readable mapping; true where the maps cannot be read. */
    static boolean isReadable(long address, long bytes) {
        if (!Files.isReadable(MAPS)) {
            return true; // not Linux: the driver's own check is all there is
        }
        try (Stream<String> lines = Files.lines(MAPS)) {
            return lines.anyMatch(line -> covers(line, address, bytes));
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + MAPS, e);
        }
    }

    /** A maps line: {@code start-end perms ...}, addresses in hex. */
    private static boolean covers(String line, long address, long bytes) {
        int dash = line.indexOf('-');
        int space = line.indexOf(' ');
        if (dash < 0 || space < dash || line.length() < space + 2 || line.charAt(space + 1) != 'r') {
            return false;
        }
        long start = Long.parseUnsignedLong(line, 0, dash, 16);
        long end = Long.parseUnsignedLong(line, dash + 1, space, 16);
        return Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address + bytes, end) <= 0
                && Long.compareUnsigned(address + bytes, address) >= 0;
    }
}
