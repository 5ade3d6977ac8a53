package io.gradsync.cli;

import io.gradsync.tasks.cuda.CudaDevice;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.device.HostMemory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What a command checks before it measures anything: that its output files can be written where
 * they are to go, and that the memory a request needs is there. Each failure is one usage line
 * (exit 2), so a long benchmark never ends in a stack trace or a file it could not write.
 */
final class Preflight {
    private Preflight() {
    }

    /** {@code file} can be created or replaced: its folder exists (it is not created) and takes a new file. */
    static void writableFile(CommandSpec spec, String option, Path file) {
        if (file.toString().isEmpty()) { // --json= : the empty path is the working folder
            throw Usage.error(spec, option + " needs a file name, got ''");
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw Usage.error(spec, option + " " + file + ": the folder " + parent + " does not exist");
        }
        if (Files.isDirectory(file)) {
            throw Usage.error(spec, option + " " + file + ": is a folder, not a file");
        }
        probe(spec, option, file, parent);
    }

    /** {@code dir} exists and takes new files, or can be made (with the folders above it that are missing). */
    static void writableDirectory(CommandSpec spec, String option, Path dir) {
        if (dir.toString().isEmpty()) { // not the working folder by accident
            throw Usage.error(spec, option + " needs a folder name, got ''");
        }
        Path at = dir.toAbsolutePath();
        if (Files.exists(at) && !Files.isDirectory(at)) {
            throw Usage.error(spec, option + " " + dir + ": is a file, not a folder");
        }
        Path existing = at;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null || !Files.isDirectory(existing)) {
            throw Usage.error(spec, option + " " + dir + ": " + existing + " is a file, not a folder");
        }
        probe(spec, option, dir, existing);
    }

    /** Creates and deletes a file in {@code folder}: permissions, read-only mounts and /proc all answer it truthfully. */
    private static void probe(CommandSpec spec, String option, Path target, Path folder) {
        try {
            Files.delete(Files.createTempFile(folder, ".gradsync-", ".probe"));
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            throw Usage.error(spec, option + " " + target + ": cannot write in " + folder + " ("
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")");
        }
    }

    /**
     * The request fits: {@code hostBytes} of host memory in all (about, and at most the machine's),
     * and {@code deviceBytes} on each GPU among {@code devices} (JVM devices count as host memory).
     */
    static void fits(CommandSpec spec, String what, long hostBytes, long deviceBytes, List<? extends Device> devices) {
        long host = HostMemory.totalBytes();
        if (hostBytes < 0 || hostBytes > host) {
            throw Usage.error(spec, what + " needs " + about(hostBytes) + " of host memory; this machine has "
                    + describe(host));
        }
        for (Device d : devices) {
            if (d instanceof CudaDevice && (deviceBytes < 0 || deviceBytes > d.memoryBytes())) {
                throw Usage.error(spec, what + " needs " + about(deviceBytes) + " on " + d.id() + ", which has "
                        + describe(d.memoryBytes()));
            }
        }
    }

    /** Bytes for many of {@code each}, saturating (a request of 8 EiB times 4 is simply too much). */
    static long times(long each, long count) {
        try {
            return Math.multiplyExact(each, count);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    private static String about(long bytes) {
        return bytes == Long.MAX_VALUE || bytes < 0 ? describe(bytes) : "about " + describe(bytes);
    }

    private static String describe(long bytes) {
        if (bytes == Long.MAX_VALUE || bytes < 0) {
            return "more than 8 EiB";
        }
        return bytes >= 1L << 30 ? String.format(java.util.Locale.ROOT, "%.1f GiB", bytes / (double) (1L << 30))
                : String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
    }
}
