package io.gradsync.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Packs the module's classes (with the gcc-built shim) into a jar, as the build does, and
 * checks in a fresh JVM that the shim is extracted from the jar and loads, and that the
 * absent NCCL is reported naming libnccl.so.2.
 */
class ShimFromJarTest {

    @TempDir
    Path dir;

    @Test
    void shimLoadsFromJarAndReportsNcclAbsent() throws Exception {
        assumeFalse(Nccl.isAvailable(), "NCCL is installed here");
        Path classes = ChildJvm.classesDir(NcclNative.class);
        Path jar = classes; // already a jar where the tests run from the built jars (the GPU node)
        if (Files.isDirectory(classes)) {
            assertTrue(Files.isRegularFile(classes.resolve(NativeLoader.SHIM_RESOURCE.substring(1))),
                "the build must place the shim under target/classes");
            jar = dir.resolve("nccl-jni.jar");
            pack(classes, jar);
        }

        Map<String, String> out = ChildJvm.probe(jar + File.pathSeparator + ChildJvm.classesDir(AvailabilityProbe.class),
            List.of(), Map.of());
        assertTrue(out.get("shimPath").endsWith(".jar"), out::toString);
        assertEquals("true", out.get("shim"), out::toString);
        assertEquals("false", out.get("available"));
        assertEquals("libnccl.so.2", out.get("library"));
        assertTrue(out.get("reason").contains("libnccl.so.2"), out::toString);
        assertTrue(out.get("version").contains("NCCL is not available"), out::toString);
        assertTrue(out.get("uniqueId").contains("libnccl.so.2"), out::toString);
    }

    private static void pack(Path root, Path jar) throws IOException {
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
             Stream<Path> files = Files.walk(root)) {
            for (Path p : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                out.putNextEntry(new JarEntry(root.relativize(p).toString().replace(File.separatorChar, '/')));
                Files.copy(p, out);
                out.closeEntry();
            }
        }
    }
}
