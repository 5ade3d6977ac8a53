package io.gradsync.nccl;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Loads the JNI shim from the jar and then NCCL, once per JVM. The holder idiom makes the
 * load lazy, once only and thread-safe (class initialisation is). Nothing here throws: every
 * failure ends up in {@link NcclAvailability#reason()}.
 */
final class NativeLoader {
    /** System property naming the NCCL library (a path or a soname); wins over the environment. */
    static final String LIBRARY_PROPERTY = "gradsync.nccl.library";
    /** Environment variable naming the NCCL library, used where the property is not set. */
    static final String LIBRARY_ENV = "GRADSYNC_NCCL_LIBRARY";
    /** The soname looked up on the default library search path. */
    static final String DEFAULT_LIBRARY = "libnccl.so.2";
    /** Where the Maven build puts the shim inside the jar. */
    static final String SHIM_RESOURCE = "/native/linux-x86_64/libgradsync_nccl.so";

    private NativeLoader() {
    }

    private static final class Holder {
        static final NcclAvailability AVAILABILITY = loadOnce();
    }

    static NcclAvailability availability() {
        return Holder.AVAILABILITY;
    }

    private static NcclAvailability loadOnce() {
        String library = DEFAULT_LIBRARY;
        String source = "default library search path";
        try {
            String fromProperty = System.getProperty(LIBRARY_PROPERTY);
            String fromEnv = System.getenv(LIBRARY_ENV);
            if (fromProperty != null && !fromProperty.isBlank()) {
                library = fromProperty.strip();
                source = "system property " + LIBRARY_PROPERTY;
            } else if (fromEnv != null && !fromEnv.isBlank()) {
                library = fromEnv.strip();
                source = "environment variable " + LIBRARY_ENV;
            }
        } catch (SecurityException e) {
            // Fall back to the default name; the reason below still says which name was tried.
        }
        String tried = "tried " + library + " (" + source + ")";

        try {
            loadShim();
        } catch (Throwable t) { // never let discovery throw, whatever went wrong
            return new NcclAvailability(false,
                "the gradsync JNI shim " + SHIM_RESOURCE + " could not be loaded (" + describe(t)
                    + "), so NCCL was not tried; it would have " + tried,
                library, source, null, null, List.of(), false);
        }

        try {
            String error = NcclNative.load(library);
            if (error != null) {
                return new NcclAvailability(false,
                    "cannot load NCCL: " + tried + ": " + error
                        + "; set -D" + LIBRARY_PROPERTY + " or " + LIBRARY_ENV + " to the full path of libnccl.so.2",
                    library, source, null, null, List.of(), true);
            }
            NcclVersion version = NcclVersion.fromCode(NcclNative.getVersion());
            String path = NcclNative.loadedPath();
            List<String> missing = Arrays.asList(NcclNative.missingSymbols());
            String reason = "NCCL " + version + " loaded from " + (path != null ? path : library) + " (" + source + ")"
                + (missing.isEmpty() ? "" : "; missing functions: " + String.join(", ", missing));
            return new NcclAvailability(true, reason, library, source, path, version, missing, true);
        } catch (Throwable t) {
            return new NcclAvailability(false, "cannot use NCCL: " + tried + ": " + describe(t),
                library, source, null, null, List.of(), true);
        }
    }

    @SuppressWarnings("restricted") // the shim this build compiled; users grant native access (README: JVM flags)
    private static void loadShim() throws IOException {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new UnsupportedOperationException("the shim is built for linux-x86_64 only, this is " + os + "/" + arch);
        }
        Path file;
        try (InputStream in = NativeLoader.class.getResourceAsStream(SHIM_RESOURCE)) {
            if (in == null) {
                throw new IOException(SHIM_RESOURCE + " is not on the class path (was the module built with gcc?)");
            }
            // System.load needs a file; a fresh temp file per JVM avoids races between JVMs.
            file = Files.createTempFile("libgradsync_nccl", ".so");
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                Files.deleteIfExists(file);
                throw e;
            }
        }
        try {
            System.load(file.toAbsolutePath().toString());
        } finally {
            // Once mapped, the file is not needed: deleting it now leaves nothing behind after a crash.
            Files.deleteIfExists(file);
        }
    }

    private static String describe(Throwable t) {
        String message = t.getMessage();
        return t.getClass().getSimpleName() + (message != null ? ": " + message : "");
    }
}
