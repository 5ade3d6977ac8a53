package io.gradsync.tasks.kernels.launch;

import io.gradsync.tasks.kernels.BuiltinKernels;
import io.gradsync.tasks.compiler.CompiledKernel;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The run-time restrict check of {@link CudaKernels#nonCoherentArrays}: which arrays a launch may
 * load through {@code ld.global.nc}, from the byte ranges of its arguments. No GPU needed.
 */
class NonCoherentArraysTest {
    private static final long BASE = 0x7f00_0000_0000L;
    /** 1000 fp32 elements. */
    private static final long LEN = 4000;

    private static CompiledKernel kernel(String name) {
        return BuiltinKernels.byName(name).orElseThrow().compile();
    }

    /** The nc set for {@code kernel} with arrays at {@code starts}, each {@code LEN} bytes long. */
    private static Set<String> nc(String kernel, long... starts) {
        long[] lengths = new long[starts.length];
        java.util.Arrays.fill(lengths, LEN);
        Set<String> set = CudaKernels.nonCoherentArrays(kernel(kernel), starts, lengths);
        kernel(kernel).ptx(90, set); // whatever it picks, the emitter accepts
        return set;
    }

    @Test
    void disjointRangesMakeEveryReadOnlyArrayNc() {
        assertEquals(List.of("a0", "a1"), List.copyOf(nc("average2", BASE, BASE + 8192, BASE + 16384)));
        assertEquals(List.of("a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"),
                List.copyOf(nc("average8Bf16", BASE, BASE + LEN, BASE + 2 * LEN, BASE + 3 * LEN, BASE + 4 * LEN,
                        BASE + 5 * LEN, BASE + 6 * LEN, BASE + 7 * LEN, BASE + 8 * LEN)), "in parameter order");
    }

    @Test
    void inPlaceOutputMakesOnlyThatInputPlain() {
        assertEquals(Set.of("a1"), nc("average2", BASE, BASE, BASE + 8192));
        assertEquals(Set.of("a0", "a2"), nc("average3", BASE + 8192, BASE, BASE + 8192, BASE + 16384));
    }

    @Test
    void partialOverlapIsPlain() {
        assertEquals(Set.of("a1"), nc("average2", BASE, BASE + LEN / 2, BASE + 8192), "a0 starts inside out");
        assertEquals(Set.of("a1"), nc("average2", BASE + 100, BASE, BASE + 8192), "a0 ends inside out");
        assertEquals(Set.of("a1"), nc("average2", BASE + LEN - 4, BASE, BASE + 8192), "one shared element");
        long[] starts = {BASE, BASE + 400, BASE + 8192};
        assertEquals(Set.of("a1"), CudaKernels.nonCoherentArrays(kernel("average2"), starts, new long[]{LEN, 40, LEN}),
                "a0 wholly inside out");
    }

    @Test
    void adjacentRangesAreNc() {
        assertEquals(Set.of("a0", "a1"), nc("average2", BASE + LEN, BASE, BASE + 2 * LEN), "a0 ends where out starts");
        assertEquals(Set.of("a0", "a1"), nc("average2", BASE, BASE + 2 * LEN, BASE + LEN), "a1 starts where out ends");
    }

    @Test
    void readOnlyArraysMayAliasEachOther() {
        assertEquals(Set.of("a0", "a1"), nc("average2", BASE, BASE + 8192, BASE + 8192));
    }

    @Test
    void emptyRangesOverlapNothing() {
        long[] starts = {BASE, BASE, BASE};
        assertEquals(Set.of("a0", "a1"), CudaKernels.nonCoherentArrays(kernel("average2"), starts, new long[]{0, 0, 0}));
        assertEquals(Set.of("a0"), CudaKernels.nonCoherentArrays(kernel("average2"), starts, new long[]{LEN, 0, LEN}));
    }

    @Test
    void writtenArrayIsNeverNc() {
        assertEquals(Set.of("x"), nc("sumInto", BASE, BASE + 8192), "acc is read and written");
        assertEquals(Set.of(), nc("sumInto", BASE, BASE), "x in place of acc");
        assertEquals(Set.of(), nc("scaleBf16", BASE));
        assertEquals(Set.of("x"), nc("sumOfSquares", BASE, BASE + 8192), "result is an atomic add target");
        assertEquals(Set.of("in"), nc("f32ToBf16", BASE, BASE + 8192));
        assertEquals(Set.of("x"), nc("checkFiniteF16", BASE, BASE + 8192));
    }

    @Test
    void wrongNumberOfRangesIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> CudaKernels.nonCoherentArrays(kernel("average2"), new long[]{BASE, BASE}, new long[]{LEN, LEN}));
    }
}
