package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

/** The README's MyKernels block, compiled into a folder (a class of its own: javax.tools is only needed here). */
final class ReadmeKernelSource {
    private ReadmeKernelSource() {
    }

    static void compile(Path out) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assumeTrue(javac != null, "no Java compiler in this runtime, and MyKernels was not compiled beforehand");
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
    }
}
