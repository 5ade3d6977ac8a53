package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code java} block of the README compiles as written, against gradsync's jars alone: each
 * is a whole compilation unit (imports included), as a user would paste it into a file.
 */
class ReadmeSnippetsTest {
    private static final Pattern BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern CLASS = Pattern.compile("(?:public\\s+)?(?:final\\s+)?(?:class|record|interface)\\s+(\\w+)");

    @Test
    void everyJavaSnippetCompiles(@TempDir Path out) throws IOException {
        Path readme = Path.of("..", "README.md");
        String text = Files.readString(readme);
        List<JavaFileObject> units = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            String code = m.group(1);
            Matcher c = CLASS.matcher(code);
            assertTrue(c.find(), () -> "a README snippet is not a whole class (imports and all):\n" + code);
            String name = c.group(1);
            units.add(new SimpleJavaFileObject(URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return code;
                }
            });
        }
        assertFalse(units.isEmpty(), "the README has java snippets");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, null)) {
            boolean ok = javac.getTask(errors, files, null, List.of("-d", out.toString(), "-classpath",
                    System.getProperty("java.class.path"), "-proc:none"), null, units).call();
            assertTrue(ok, () -> units.size() + " README snippets; javac says:\n" + errors);
        }
    }
}
