package io.gradsync.tasks.compiler;

import io.gradsync.tasks.compiler.testing.*;
import io.gradsync.tasks.compiler.optimize.ElementwiseLoop;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which kernels {@link ElementwiseLoop} finds element-wise (and so vectorizable), and which it refuses. */
class ElementwiseAnalysisTest {
    private static final KernelCompiler COMPILER = new KernelCompiler();

    private static CompiledKernel shape(String name) {
        return COMPILER.compile(ElementwiseShapes.class, name);
    }

    @Test
    void contextAndSerialKernelsAreNot() {
        assertFalse(COMPILER.compile(FeatureKernels.class, "contextStyle").isElementwise());
        assertFalse(COMPILER.compile(FeatureKernels.class, "serial").isElementwise());
    }

    @Test
    void featureKernels() {
        assertEquals(2, COMPILER.compile(FeatureKernels.class, "conversions").vectorWidth(), "f32, i32 and i64: 2 per 16 bytes");
        assertFalse(COMPILER.compile(FeatureKernels.class, "expKernel").isElementwise(), "exp is StrictMath's code, with branches");
        assertFalse(COMPILER.compile(FeatureKernels.class, "halves").isElementwise(), "loads after stores");
        assertFalse(COMPILER.compile(FeatureKernels.class, "loops").isElementwise());
        assertFalse(COMPILER.compile(FeatureKernels.class, "intOps").isElementwise(), "conditional expressions branch");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "yesScalarBound, 4, , n",
            "yesLocalBound, 8, in, ",
            "yesIndexAsValue, 4, out, ",
            "yesInlinedCall, 8, out, ",
            "yesLocalReassigned, 4, out, ",
            "yesDoubles, 2, out, ",
            "yesRawBits, 4, out, ",
            "yesReadModifyWrite, 4, acc, ",
            "yesFill, 4, out, ",
            "yesLoadAfterAnotherStore, 4, w, ",
            "yesBranchyPrologue, 4, out, ",
            "yesCallBeforeLoop, 4, out, ",
            "yesOwnArrayBeforeLoop, 4, out, ",
    })
    void handWrittenElementwise(String name, int width, String boundArray, String boundScalar) {
        CompiledKernel k = shape(name);
        assertNull(ElementwiseLoop.rejection(k.ir()), name);
        assertTrue(k.isElementwise());
        assertEquals(width, k.vectorWidth());
        assertEquals(Optional.ofNullable(boundArray), k.elementwiseLoop().orElseThrow().boundArray());
        assertEquals(Optional.ofNullable(boundScalar), k.elementwiseLoop().orElseThrow().boundScalar());
    }

    /** Only code before the loop that branches is emitted block by block; straight-line code keeps its emission. */
    @Test
    void onlyABranchingPrologueIsEmittedAsBlocks() {
        ElementwiseLoop branchy = shape("yesBranchyPrologue").elementwiseLoop().orElseThrow();
        assertTrue(branchy.prologueBranches());
        assertTrue(branchy.prologueBlocks().size() > 2, "the pow's blocks");
        for (String name : List.of("yesCallBeforeLoop", "yesScalarBound", "yesLocalBound", "yesIndexAsValue", "yesInlinedCall", "yesLocalReassigned",
                "yesDoubles", "yesRawBits", "yesReadModifyWrite", "yesFill", "yesLoadAfterAnotherStore")) {
            assertFalse(shape(name).elementwiseLoop().orElseThrow().prologueBranches(), name);
        }
    }

    /**
     * The code before the loop indexes its own arrays within them by construction where every
     * assignment of the index reaching the access is such a constant: {@code StrictMath.pow}'s
     * {@code k} (reused later for an exponent) is; an argument is not.
     */
    @Test
    void ownArraysBeforeTheLoopAreInBoundsOnlyWhereProven() {
        assertTrue(shape("yesBranchyPrologue").elementwiseLoop().orElseThrow().ownArraysInBounds(), "StrictMath.pow's tables");
        assertTrue(shape("yesScalarBound").elementwiseLoop().orElseThrow().ownArraysInBounds(), "no own arrays");
        assertFalse(shape("yesOwnArrayBeforeLoop").elementwiseLoop().orElseThrow().ownArraysInBounds(), "k & 7 into an int[4]");
    }

    /** An array loaded after another's store must lie apart from it; loads before any store need not. */
    @Test
    void loadsAfterAnotherArraysStoreNameThePairsThatMustLieApart() {
        ElementwiseLoop loop = shape("yesLoadAfterAnotherStore").elementwiseLoop().orElseThrow();
        assertEquals(List.of("w m", "g m"), loop.mustLieApart().stream().map(p -> p.get(0).name() + " " + p.get(1).name()).toList());
        assertEquals(List.of(), shape("yesReadModifyWrite").elementwiseLoop().orElseThrow().mustLieApart());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "noLoopBeforeLoop | a loop before the loop",
            "noBranchyLoadBeforeLoop | array access before the loop",
            "noBranchAfterBranchyPrologue | branches inside the loop body",
            "noNeighbour | index other than the loop index",
            "noStrided | index other than the loop index",
            "noOtherIndexWritten | index other than the loop index",
            "noConstantIndex | index other than the loop index",
            "noInnerLoop | branches inside the loop body",
            "noBranch | branches inside the loop body",
            "noConditionalStore | branches inside the loop body",
            "noCarriedValue | carried from one iteration",
            "noLoadAfterStore | after its store",
            "noStoredTwice | stored twice",
            "noNonZeroStart | does not start at 0",
            "noBoundExpression | loop test computes",
            "noAtomic | atomic",
            "noLoadBeforeLoop | array access before the loop",
            "noMixedWidths | no common vector width",
            "noAccess | no array accessed",
    })
    void handWrittenNotElementwise(String name, String why) {
        CompiledKernel k = shape(name);
        assertEquals(KernelStyle.PARALLEL_LOOP, k.style());
        String rejection = ElementwiseLoop.rejection(k.ir());
        assertNotNull(rejection, name + " was found element-wise");
        assertTrue(rejection.contains(why), name + ": " + rejection);
        assertFalse(k.isElementwise());
        assertEquals(1, k.vectorWidth());
    }

    /** Every kernel in ElementwiseShapes is covered by one of the two tests above. */
    @Test
    void everyShapeIsClassified() {
        long count = Arrays.stream(ElementwiseShapes.class.getDeclaredMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()))
                .map(Method::getName)
                .filter(n -> !(n.startsWith("yes") || n.startsWith("no")))
                .count();
        assertEquals(0, count, "kernels in ElementwiseShapes must be named yes* or no*");
        for (Method m : ElementwiseShapes.class.getDeclaredMethods()) {
            if (Modifier.isPublic(m.getModifiers())) {
                assertEquals(m.getName().startsWith("yes"), shape(m.getName()).isElementwise(), m.getName());
            }
        }
    }
}
