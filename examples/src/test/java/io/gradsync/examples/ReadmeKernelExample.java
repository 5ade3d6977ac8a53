package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.StringWriter;
import java.lang.reflect.InvocationTargetException;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

/** The README's "Writing your own kernel" program, compiled from the README as written and run with a device argument. */
final class ReadmeKernelExample {
    private ReadmeKernelExample() {
    }

    /** Runs {@code MyKernels.main(runtime)} and returns what it printed; a mismatch with Java throws. */
    static String run(String runtime, Path out) throws Exception {
        String text = Files.readString(Path.of("..", "README.md"));
        Matcher m = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL).matcher(text);
        String code = null;
        while (m.find()) {
            if (m.group(1).contains("public final class MyKernels")) {
                code = m.group(1);
            }
        }
        assertTrue(code != null, "the README has the MyKernels example");
        String source = code;
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        JavaFileObject unit = new SimpleJavaFileObject(URI.create("string:///MyKernels.java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return source;
            }
        };
        boolean ok = javac.getTask(errors, null, null, List.of("-d", out.toString(), "-classpath", System.getProperty("java.class.path"),
                "-proc:none"), null, List.of(unit)).call();
        assertTrue(ok, () -> "javac: " + errors);
        PrintStream saved = System.out;
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (URLClassLoader loader = new URLClassLoader(new URL[] {out.toUri().toURL()}, ReadmeKernelExample.class.getClassLoader())) {
            System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
            loader.loadClass("MyKernels").getMethod("main", String[].class).invoke(null, (Object) new String[] {runtime});
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception x ? x : new IllegalStateException(e.getCause());
        } finally {
            System.setOut(saved);
        }
        return printed.toString(StandardCharsets.UTF_8);
    }
}
