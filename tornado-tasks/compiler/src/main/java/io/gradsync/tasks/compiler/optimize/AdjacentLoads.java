package io.gradsync.tasks.compiler.optimize;

import io.gradsync.tasks.compiler.ir.Block;
import io.gradsync.tasks.compiler.ir.Const;
import io.gradsync.tasks.compiler.ir.Insn;
import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.KernelIr;
import io.gradsync.tasks.compiler.ir.KernelParam;
import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;
import io.gradsync.tasks.compiler.ir.Operand;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Loads of adjacent elements of one array that a back end may make one vector load of, as a
 * thread reading {@code x[e]}, {@code x[e + 1]}, {@code x[e + 2]}, {@code x[e + 3]} of a 16-bit
 * array can read 8 bytes in one instruction instead of four 2-byte ones: what 16-bit reductions,
 * bound by the count of their load instructions, need to reach copy bandwidth.
 *
 * <p>A group is 2 or 4 loads (at most 16 bytes) of elements {@code base + plus + k} in one basic
 * block, of an array the kernel never writes, with nothing between them that writes memory or
 * waits at a barrier and no new value of {@code base}: reading all of them at the first one's place
 * gives every load the value it would have read. The first element's index must be a multiple of
 * the group's width, which {@link #divisibility} proves from the IR ({@code 4 * q}, {@code 2 * p + 2},
 * sums and products of such, constants), so that a vector load is aligned wherever the array's start
 * is aligned to the group's bytes. Only the launch knows the start: the merged form is the
 * kernel's vector form, chosen per launch like the element-wise one.
 */
public final class AdjacentLoads {
    /** The largest power of two known to divide a value: 32 for 0. */
    private static final int ZERO = 32;

    /**
     * Loads of {@code array[base + plus + k]}, {@code lanes.get(k)} for {@code k < width}; {@code first}
     * is the one that comes first in the block, where the vector load goes.
     */
    public record Group(ArrayParam array, Var base, long plus, List<Insn.Load> lanes, Insn.Load first) {
        public int width() {
            return lanes.size();
        }

        /** Bytes the vector load moves, which is also the alignment it needs. */
        public int bytes() {
            return width() * array.element().bytes();
        }

        /** The lane {@code load} reads. */
        public int lane(Insn.Load load) {
            for (int k = 0; k < lanes.size(); k++) {
                if (lanes.get(k) == load) {
                    return k;
                }
            }
            throw new IllegalArgumentException("not a load of this group: " + load);
        }
    }

    /** No groups: what the scalar form uses. */
    public static final AdjacentLoads NONE = new AdjacentLoads(Map.of(), Map.of());

    private final Map<Insn.Load, Group> byLoad;
    private final Map<String, Integer> bytesByArray;

    private AdjacentLoads(Map<Insn.Load, Group> byLoad, Map<String, Integer> bytesByArray) {
        this.byLoad = byLoad;
        this.bytesByArray = bytesByArray;
    }

    /** The groups of {@code ir}, none when it has no adjacent loads to merge. */
    public static AdjacentLoads find(KernelIr ir) {
        Map<Var, Integer> divisibility = divisibility(ir);
        Map<Insn.Load, Group> byLoad = new IdentityHashMap<>();
        Map<String, Integer> bytes = new LinkedHashMap<>();
        IndexOffsets offsets = new IndexOffsets();
        for (Block b : ir.blocks()) {
            offsets.startBlock();
            List<Pending> pending = new ArrayList<>();
            for (Insn insn : b.insns()) {
                if (insn instanceof Insn.Load l && !ir.writes(l.array().name()) && l.index() instanceof Var index) {
                    IndexOffsets.Offset o = offsets.of(index);
                    pending.add(new Pending(l, o.base(), o.plus()));
                }
                Var d = ElementwiseLoop.def(insn);
                if (writesOrWaits(insn) || d != null && pending.stream().anyMatch(p -> p.base().equals(d))) {
                    close(pending, divisibility, byLoad, bytes);
                }
                offsets.note(insn);
            }
            close(pending, divisibility, byLoad, bytes);
        }
        return byLoad.isEmpty() ? NONE : new AdjacentLoads(Collections.unmodifiableMap(byLoad), Map.copyOf(bytes));
    }

    private record Pending(Insn.Load load, Var base, long plus) {
    }

    private static boolean writesOrWaits(Insn insn) {
        return switch (insn) {
            case Insn.Store s -> true;
            case Insn.AtomicAdd a -> true;
            case Insn.Atomic a -> true;
            case Insn.Barrier x -> true;
            case Insn.WarpReduce x -> true;
            default -> false;
        };
    }

    /** Makes groups of the loads read since the last write, barrier or new base, widest first, and forgets them. */
    private static void close(List<Pending> pending, Map<Var, Integer> divisibility, Map<Insn.Load, Group> byLoad, Map<String, Integer> bytes) {
        Map<List<Object>, Map<Long, Pending>> byBase = new LinkedHashMap<>();
        for (Pending p : pending) {
            // a repeated element keeps its first load; the repeat stays a load of its own
            byBase.computeIfAbsent(List.of(p.load().array().name(), p.base()), k -> new HashMap<>()).putIfAbsent(p.plus(), p);
        }
        for (Map<Long, Pending> loads : byBase.values()) {
            Pending any = loads.values().iterator().next();
            int elementBytes = any.load().array().element().bytes();
            int known = divisibility.getOrDefault(any.base(), 0);
            for (int width : new int[]{4, 2}) {
                if (width * elementBytes > 16 || known < Integer.numberOfTrailingZeros(width)) {
                    continue;
                }
                for (long plus : loads.keySet().stream().sorted().toList()) {
                    if (plus % width != 0) {
                        continue;
                    }
                    List<Insn.Load> lanes = new ArrayList<>();
                    for (int k = 0; k < width; k++) {
                        Pending p = loads.get(plus + k);
                        if (p != null && !byLoad.containsKey(p.load())) {
                            lanes.add(p.load());
                        }
                    }
                    if (lanes.size() == width) {
                        Insn.Load first = pending.stream().map(Pending::load).filter(l -> lanes.stream().anyMatch(x -> x == l))
                                .findFirst().orElseThrow();
                        Group g = new Group(any.load().array(), any.base(), plus, List.copyOf(lanes), first);
                        lanes.forEach(l -> byLoad.put(l, g));
                        bytes.merge(g.array().name(), g.bytes(), Math::max);
                    }
                }
            }
        }
        pending.clear();
    }

    /** The group {@code load} belongs to, if any. */
    public Optional<Group> group(Insn.Load load) {
        return Optional.ofNullable(byLoad.get(load));
    }

    public boolean isEmpty() {
        return byLoad.isEmpty();
    }

    /**
     * The alignment in bytes that the array's start needs for the merged form: its widest group's
     * bytes, or its element size when none of its loads is merged.
     */
    public int accessBytes(ArrayParam array) {
        return bytesByArray.getOrDefault(array.name(), array.element().bytes());
    }

    /** The arrays with merged loads and the alignment each needs, in parameter order of first use. */
    public Map<String, Integer> alignments() {
        return bytesByArray;
    }

    /**
     * For every int variable of {@code ir}: the largest {@code k} (up to 32) such that every value
     * it can take is a multiple of {@code 2^k}, taken over all its assignments (variables are not
     * SSA), so correct wherever it is read. Java's int arithmetic wraps, which keeps low zero bits:
     * a sum keeps the fewer of its operands', a product their total, a left shift by a constant
     * adds it. Parameters, loads and thread coordinates are 0 (nothing known).
     */
    static Map<Var, Integer> divisibility(KernelIr ir) {
        List<Insn> defs = new ArrayList<>();
        Map<Var, Integer> known = new HashMap<>();
        for (Block b : ir.blocks()) {
            for (Insn insn : b.insns()) {
                Var d = ElementwiseLoop.def(insn);
                if (d != null && d.type() == IrType.I32) {
                    defs.add(insn);
                    known.put(d, ZERO);
                }
            }
        }
        for (KernelParam p : ir.params()) {
            if (p instanceof KernelParam.ScalarParam s) {
                known.put(s.var(), 0); // a parameter may be assigned in the body too: its first value is unknown
            }
        }
        boolean changed = true;
        while (changed) {
            changed = false;
            for (Insn insn : defs) {
                Var d = ElementwiseLoop.def(insn);
                int value = Math.min(known.get(d), evaluate(insn, known));
                if (value != known.get(d)) {
                    known.put(d, value);
                    changed = true;
                }
            }
        }
        return known;
    }

    private static int evaluate(Insn insn, Map<Var, Integer> known) {
        return switch (insn) {
            case Insn.Move m -> of(m.src(), known);
            case Insn.Select s -> Math.min(of(s.ifTrue(), known), of(s.ifFalse(), known));
            case Insn.Binary b -> {
                int x = of(b.a(), known);
                int y = of(b.b(), known);
                int shift = b.b() instanceof Const c ? c.intValue() & 31 : -1;
                yield switch (b.op()) {
                    case ADD, SUB, OR, XOR, MIN, MAX -> Math.min(x, y);
                    case MUL -> Math.min(ZERO, x + y);
                    case AND -> Math.max(x, y);
                    case SHL -> shift < 0 ? 0 : Math.min(ZERO, x + shift);
                    case SHR, USHR -> shift < 0 ? 0 : x == ZERO ? ZERO : Math.max(0, x - shift);
                    case DIV, REM -> 0;
                };
            }
            default -> 0;
        };
    }

    private static int of(Operand o, Map<Var, Integer> known) {
        if (o instanceof Const c) {
            return c.type() == IrType.I32 ? (c.intValue() == 0 ? ZERO : Integer.numberOfTrailingZeros(c.intValue())) : 0;
        }
        return known.getOrDefault((Var) o, 0);
    }
}
