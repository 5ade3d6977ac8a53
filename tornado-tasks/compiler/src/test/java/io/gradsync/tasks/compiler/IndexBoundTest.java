package io.gradsync.tasks.compiler;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gradsync.tasks.compiler.optimize.IndexBound;
import io.gradsync.tasks.compiler.testing.IndexBoundShapes;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The scalar a kernel bounds its global index by: named n_* where it is n, none_* where there is none. */
class IndexBoundTest {
    private static final KernelCompiler COMPILER = new KernelCompiler();

    @Test
    void everyShapeHasTheBoundItsNameSays() {
        int seen = 0;
        for (Method m : IndexBoundShapes.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers())) {
                Optional<String> expected = m.getName().startsWith("n_") ? Optional.of("n") : Optional.empty();
                assertEquals(expected, IndexBound.scalar(COMPILER.compile(IndexBoundShapes.class, m.getName()).ir()), m.getName());
                seen++;
            }
        }
        assertEquals(8, seen);
        assertEquals(4, Arrays.stream(IndexBoundShapes.class.getDeclaredMethods()).filter(m -> m.getName().startsWith("n_")).count());
    }
}
