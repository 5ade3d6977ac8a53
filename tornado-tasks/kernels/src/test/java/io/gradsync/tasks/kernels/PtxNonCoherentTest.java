package io.gradsync.tasks.kernels;

import io.gradsync.tasks.compiler.access.KernelIrs;
import io.gradsync.tasks.api.Bfloat16Array;
import io.gradsync.tasks.api.IntArray;
import io.gradsync.tasks.api.Parallel;
import io.gradsync.tasks.compiler.CompiledKernel;
import io.gradsync.tasks.compiler.KernelCompiler;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ptx.PtxEmitter;
import io.gradsync.tasks.compiler.testing.Ptxas;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Non-coherent loads in the PTX emitter: {@code ld.global.nc} exactly for the arrays named, the
 * rest of the code unchanged, and names that would be unsafe refused. Assembly of every
 * built-in's nc variant is in {@link PtxAssemblesTest}.
 */
class PtxNonCoherentTest {

    private static CompiledKernel kernel(String name) {
        return BuiltinKernels.byName(name).orElseThrow().compile();
    }

    @Test
    void writtenArraysAreTheStoredAndAtomicallyAddedOnes() {
        assertEquals(Set.of("out"), KernelIrs.ir(kernel("average2")).writtenArrays());
        assertEquals(Set.of("out"), KernelIrs.ir(kernel("average8Bf16")).writtenArrays());
        assertEquals(Set.of("acc"), KernelIrs.ir(kernel("sumInto")).writtenArrays());
        assertEquals(Set.of("x"), KernelIrs.ir(kernel("scaleF16")).writtenArrays());
        assertEquals(Set.of("result"), KernelIrs.ir(kernel("sumOfSquares")).writtenArrays(), "atomic add");
        assertEquals(Set.of("flag"), KernelIrs.ir(kernel("checkFiniteBf16")).writtenArrays());
        assertEquals(List.of("a0", "a1", "a2"), kernel("average3F16").readOnlyArrays());
        assertEquals(List.of("in"), kernel("bf16ToF32").readOnlyArrays());
    }

    @Test
    void irRefusesAnUnlistedWrittenArray() {
        KernelIr ir = KernelIrs.ir(kernel("average2"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new KernelIr(ir.name(), ir.source(), ir.params(), ir.blocks(), ir.vars(), Set.of()));
        assertTrue(e.getMessage().contains("average2") && e.getMessage().contains("out"), e.getMessage());
    }

    /** Built-ins covering every element kind, raw-bit loads, a read-modify-write and the KernelContext style. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"average2", "average2Bf16", "average3F16", "sumInto", "sumIntoBf16", "scaleF16", "copyF16",
            "bf16ToF32", "f16ToF32", "checkFinite", "checkFiniteBf16", "checkFiniteF16",
            "sumOfSquaresPartials", "sumOfSquaresBf16", "sumOfSquaresPartialsF16"})
    void ncExactlyOnTheReadOnlyArraysLoads(String name) {
        CompiledKernel k = kernel(name);
        Set<String> readOnly = new LinkedHashSet<>(k.readOnlyArrays());
        String plain = PtxEmitter.entry(KernelIrs.ir(k), 90);
        String nc = PtxEmitter.entry(KernelIrs.ir(k), 90, readOnly);

        Map<String, List<Boolean>> loads = loadsByArray(nc);
        for (String array : KernelIrs.ir(k).arrayParams().stream().map(a -> a.name()).toList()) {
            List<Boolean> ncFlags = loads.getOrDefault(array, List.of());
            if (readOnly.contains(array)) {
                assertFalse(ncFlags.isEmpty(), array + " is read-only but never loaded:\n" + nc);
                assertTrue(ncFlags.stream().allMatch(b -> b), array + ": every load should be .nc:\n" + nc);
            } else {
                assertTrue(ncFlags.stream().noneMatch(b -> b), array + " is written: no load may be .nc:\n" + nc);
            }
        }
        assertFalse(loadsByArray(plain).values().stream().flatMap(List::stream).anyMatch(b -> b), "default has no .nc");
        // nothing else changes: dropping ".nc" gives back the plain code
        assertEquals(plain, nc.replace("ld.global.nc.", "ld.global."));
    }

    @Test
    void halfKindsUseTheSixteenBitNcForms() throws Exception {
        assertTrue(kernel("average2Bf16").ptx(90, Set.of("a0", "a1")).contains("ld.global.nc.u16 "));
        assertTrue(kernel("average2F16").ptx(90, Set.of("a0", "a1")).contains("ld.global.nc.b16 "));
        CompiledKernel raw = KernelCompiler.shared().compile(RawBits.class, "copyBits");
        assertTrue(raw.ptx(90, Set.of("in")).contains("ld.global.nc.s16 "), "raw bits");
        if (Ptxas.available()) { // the built-ins' nc forms are assembled in PtxAssemblesTest, this one here
            Ptxas.assemble(raw.ptx(90, Set.of("in")), 90);
        }
        assertTrue(kernel("f16ToF32").ptx(75, Set.of("in")).contains("ld.global.nc.b16 "));
    }

    @Test
    void onlySomeArraysNc() {
        String ptx = PtxEmitter.entry(KernelIrs.ir(kernel("average3")), 90, Set.of("a1"));
        Map<String, List<Boolean>> loads = loadsByArray(ptx);
        assertEquals(List.of(false), loads.get("a0"));
        assertEquals(List.of(true), loads.get("a1"));
        assertEquals(List.of(false), loads.get("a2"));
    }

    @Test
    void writtenArrayIsRefused() {
        for (String[] c : new String[][]{{"average2", "out"}, {"sumInto", "acc"}, {"scaleBf16", "x"}, {"sumOfSquares", "result"}}) {
            CompiledKernel k = kernel(c[0]);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PtxEmitter.entry(KernelIrs.ir(k), 90, Set.of(c[1])), c[0]);
            assertTrue(e.getMessage().contains("kernel " + c[0]) && e.getMessage().contains("array " + c[1])
                    && e.getMessage().contains("written"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> k.ptx(90, Set.of(c[1])), "through CompiledKernel");
        }
    }

    @Test
    void unknownArrayIsRefused() {
        CompiledKernel k = kernel("average2");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PtxEmitter.entry(KernelIrs.ir(k), 90, Set.of("a0", "b7")));
        assertTrue(e.getMessage().contains("kernel average2") && e.getMessage().contains("b7")
                && e.getMessage().contains("not one of its array parameters"), e.getMessage());
        // a scalar parameter is not an array either
        e = assertThrows(IllegalArgumentException.class, () -> k.ptx(90, Set.of("k")));
        assertTrue(e.getMessage().contains("'k'") || e.getMessage().contains(" k "), e.getMessage());
    }

    @Test
    void variantsAreCachedPerSmAndSet() {
        CompiledKernel k = kernel("average2Bf16");
        assertSame(k.ptx(90), k.ptx(90, Set.of()));
        assertSame(k.ptx(90, Set.of("a0", "a1")), k.ptx(90, new HashSet<>(List.of("a1", "a0"))));
        assertFalse(k.ptx(90, Set.of("a0")).equals(k.ptx(90, Set.of("a0", "a1"))));
        assertFalse(k.ptx(90, Set.of("a0")).equals(k.ptx(80, Set.of("a0"))));
        assertTrue(k.ptx(90, Set.of("a1", "a0")).contains("// non-coherent loads: a0, a1\n"), "comment in parameter order");
        assertFalse(k.ptx(90).contains("non-coherent"));
    }

    /** No built-in loads raw 16-bit patterns from a read-only array; this does ({@code ld.global.nc.s16}). */
    static final class RawBits {
        public static void copyBits(Bfloat16Array in, IntArray out) {
            for (@Parallel int i = 0; i < in.getSize(); i++) {
                out.set(i, in.getBits(i));
            }
        }
    }

    private static final Pattern PARAM_PTR = Pattern.compile("ld\\.param\\.u64 (%rd\\d+), \\[\\w+?_p\\d+_(\\w+)_ptr\\]");
    private static final Pattern CVTA = Pattern.compile("cvta\\.to\\.global\\.u64 (%rd\\d+), (%rd\\d+)");
    private static final Pattern ADD64 = Pattern.compile("add\\.s64 (%rd\\d+), (%rd\\d+), (%rd\\d+)");
    private static final Pattern LOAD = Pattern.compile("ld\\.global\\.(nc\\.)?\\w+ %\\w+, \\[(%rd\\d+)[^\\]]*\\]");

    /**
     * Which array each global load reads, following the emitter's address pattern (param pointer,
     * cvta, optional add of an offset), and whether it is {@code .nc}: array name to one flag per load.
     */
    static Map<String, List<Boolean>> loadsByArray(String ptx) {
        Map<String, String> regArray = new HashMap<>();
        Map<String, List<Boolean>> loads = new HashMap<>();
        for (String line : ptx.lines().map(String::trim).toList()) {
            Matcher m;
            if ((m = PARAM_PTR.matcher(line)).lookingAt()) {
                regArray.put(m.group(1), m.group(2));
            } else if ((m = CVTA.matcher(line)).lookingAt()) {
                regArray.put(m.group(1), regArray.get(m.group(2)));
            } else if ((m = ADD64.matcher(line)).lookingAt() && regArray.containsKey(m.group(2))) {
                regArray.put(m.group(1), regArray.get(m.group(2)));
            } else if (line.startsWith("ld.global")) {
                m = LOAD.matcher(line);
                assertTrue(m.lookingAt(), "unexpected load form: " + line);
                String array = regArray.get(m.group(2));
                assertTrue(array != null, "load from an address not traced to an array: " + line);
                loads.computeIfAbsent(array, a -> new ArrayList<>()).add(m.group(1) != null);
            }
        }
        return loads;
    }
}
