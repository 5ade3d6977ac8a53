package io.gradsync.examples;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The README's "Writing your own kernel" program, run with a device argument: the class on the
 * classpath where there is one ({@code scripts/make-gpu-bundle} compiles it, since a GPU node's
 * runtime has no compiler), else the README's block compiled now ({@link ReadmeKernelSource}).
 */
final class ReadmeKernelExample {
    private ReadmeKernelExample() {
    }

    /** Runs {@code MyKernels.main(runtime)} and returns what it printed; a mismatch with Java throws. */
    static String run(String runtime, Path out) throws Exception {
        ClassLoader here = ReadmeKernelExample.class.getClassLoader();
        if (here.getResource("MyKernels.class") != null) {
            return invokeMain(here.loadClass("MyKernels"), runtime);
        }
        ReadmeKernelSource.compile(out);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()}, here)) {
            return invokeMain(loader.loadClass("MyKernels"), runtime);
        }
    }

    private static String invokeMain(Class<?> example, String runtime) throws Exception {
        PrintStream saved = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            example.getMethod("main", String[].class).invoke(null, (Object) new String[] {runtime});
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception x ? x : new IllegalStateException(e.getCause());
        } finally {
            System.setOut(saved);
        }
        return printed.toString(StandardCharsets.UTF_8);
    }
}
