package io.gradsync.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LOADER TESTS ONLY. A tiny fake {@code libnccl.so.2} is built with gcc that exports nothing
 * but {@code ncclGetVersion}. It proves that the configured path reaches dlopen, that
 * dlsym resolution and version decoding work, and that functions a library lacks are
 * reported clearly when used. It is not a stand-in for NCCL: nothing here tests NCCL's
 * behaviour (the {@code gpu}-tagged tests do that).
 */
class FakeNcclLoaderTest {

    private static final String FAKE_LIBRARY = """
        /* Loader-test fake: only ncclGetVersion, returning FAKE_CODE. Not NCCL. */
        int ncclGetVersion(int *version) {
            *version = FAKE_CODE;
            return 0;
        }
        """;

    @TempDir
    Path dir;

    private String classPath() throws Exception {
        return ChildJvm.classesDir(NcclNative.class) + File.pathSeparator + ChildJvm.classesDir(AvailabilityProbe.class);
    }

    private Path fake(String subdir, int code) throws Exception {
        Path d = dir.resolve(subdir);
        java.nio.file.Files.createDirectories(d);
        return ChildJvm.gcc(d, "libnccl.so.2", FAKE_LIBRARY, "-DFAKE_CODE=" + code);
    }

    @Test
    void loaderTestFakeLibraryFromSystemPropertyDecodesVersion() throws Exception {
        Path lib = fake("prop", 22803);
        Map<String, String> out = ChildJvm.probe(classPath(), List.of("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + lib),
            Map.of());
        assertEquals("true", out.get("available"), out::toString);
        assertEquals("2.28.3", out.get("version"));
        assertEquals("2.28.3", out.get("availabilityVersion"));
        assertEquals(lib.toString(), out.get("library"));
        assertEquals("system property gradsync.nccl.library", out.get("source"));
        assertEquals(lib.toRealPath().toString(), Path.of(out.get("loadedFrom")).toRealPath().toString());
        assertTrue(out.get("reason").startsWith("NCCL 2.28.3 loaded from "), out::toString);
        // Everything but ncclGetVersion is absent from the fake, and says so when used.
        assertTrue(out.get("missing").contains("ncclGetUniqueId"), out::toString);
        assertTrue(out.get("missing").contains("ncclCommFinalize"), out::toString);
        assertTrue(out.get("uniqueId").startsWith("NcclException ncclGetUniqueId failed: symbol ncclGetUniqueId is not exported"),
            out::toString);
        assertTrue(out.get("groupStart").contains("ncclGroupStart"), out::toString);
        assertTrue(out.get("initAll").contains("ncclCommInitAll"), out::toString);
    }

    @Test
    void loaderTestFakeLibraryFromEnvironmentDecodesOldVersionScheme() throws Exception {
        Path lib = fake("env", 2708);
        Map<String, String> out = ChildJvm.probe(classPath(), List.of(),
            Map.of(NativeLoader.LIBRARY_ENV, lib.toString()));
        assertEquals("true", out.get("available"), out::toString);
        assertEquals("2.7.8", out.get("version"));
        assertEquals("environment variable GRADSYNC_NCCL_LIBRARY", out.get("source"));
    }

    @Test
    void loaderTestSystemPropertyWinsOverEnvironment() throws Exception {
        Path lib = fake("both", 21903);
        Map<String, String> out = ChildJvm.probe(classPath(),
            List.of("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + lib),
            Map.of(NativeLoader.LIBRARY_ENV, dir.resolve("nowhere/libnccl.so.2").toString()));
        assertEquals("true", out.get("available"), out::toString);
        assertEquals("2.19.3", out.get("version"));
    }

    @Test
    void missingConfiguredLibraryIsReportedWithPathSourceAndDlerror() throws Exception {
        String missing = dir.resolve("absent/libnccl.so.2").toString();
        Map<String, String> out = ChildJvm.probe(classPath(), List.of("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + missing),
            Map.of());
        assertEquals("false", out.get("available"));
        assertEquals("true", out.get("shim"));
        String reason = out.get("reason");
        assertTrue(reason.contains(missing), reason);
        assertTrue(reason.contains("system property gradsync.nccl.library"), reason);
        assertTrue(reason.contains("No such file or directory"), reason); // dlerror's text
        assertTrue(out.get("version").startsWith("NcclException ncclGetVersion failed: NCCL is not available"), out::toString);
    }

    @Test
    void loaderTestLibraryWithoutNcclGetVersionIsNotTakenForNccl() throws Exception {
        Path lib = ChildJvm.gcc(dir, "libnotnccl.so", "int something_else(void) { return 1; }\n");
        Map<String, String> out = ChildJvm.probe(classPath(), List.of("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + lib),
            Map.of());
        assertEquals("false", out.get("available"));
        assertTrue(out.get("reason").contains("exports no ncclGetVersion"), out::toString);
    }
}
