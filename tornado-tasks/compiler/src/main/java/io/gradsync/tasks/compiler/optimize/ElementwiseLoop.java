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
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The element-wise shape of a {@code @Parallel}-loop kernel, found on its IR: one grid-stride
 * loop {@code for (i = gid; i < bound; i += gsize)} whose body is straight-line code that loads
 * and stores arrays only at exactly {@code i}. Iterations then touch disjoint elements and do
 * not depend on each other, so a back end may give one thread {@link #width()} consecutive
 * elements per iteration: one 8- or 16-byte vector access per array instead of one 2- or 4-byte
 * access per element, the body repeated once per element with unchanged arithmetic.
 *
 * <p>The rule is deliberately narrow; anything else is not element-wise and keeps the scalar code:
 * <ul>
 *   <li>before the loop only code without array accesses or thread queries but the global index
 *       (branches allowed: the code a {@code StrictMath.pow} leaves, an early return), the loop
 *       index starting at exactly 0 + global index;</li>
 *   <li>the loop test {@code i < bound} with a loop-invariant {@code bound} (a constant, a value
 *       the loop never assigns, or array lengths), after the loop nothing;</li>
 *   <li>a body without branches (blocks joined by jumps, as inlined calls leave them), atomics or
 *       thread queries; every load and store indexed by the loop variable itself; no array loaded
 *       after its own store and no array stored twice (so loads may be hoisted and stores sunk per
 *       group; an array loaded after another's store must lie apart from it in memory, which only
 *       the launch can tell: {@link #mustLieApart});
 *       no value carried from one iteration to the next (each element computed independently);</li>
 *   <li>element sizes such that one width gives every array an 8- or 16-byte access.</li>
 * </ul>
 *
 * @param width      elements per thread and iteration (2, 4 or 8): 16 bytes of the widest array
 * @param index      the loop variable
 * @param bound      the loop bound (invariant)
 * @param boundArray the array whose length is the bound, when that can be read off the IR
 * @param boundScalar the scalar parameter that is the bound, when that can be read off the IR and the
 *                   kernel never assigns the parameter: its argument bounds the loop
 * @param prologueBlocks the blocks before the loop (thread index, loop start, bound), the kernel's
 *                   first block first and the one holding the loop's entry test last (that test
 *                   left out: the form's own loops replace it); the return blocks its branches
 *                   reach among them
 * @param ownArraysInBounds whether every access of the prologue to the kernel's own arrays (a
 *                   {@code StrictMath} function's tables) is in bounds by construction: its index a
 *                   constant within the array, or a variable only ever assigned such constants. A
 *                   bounds-checked launch may take the vector form, which checks nothing, only then
 * @param body       the loop body, without the increment and the repeated test
 * @param loaded     the arrays the body loads, in order of their first load
 * @param stored     the arrays the body stores, in order of their (only) store
 */
public record ElementwiseLoop(int width, Var index, Operand bound, Optional<String> boundArray,
                              Optional<String> boundScalar, List<Block> prologueBlocks, boolean ownArraysInBounds, List<Insn> body,
                              List<ArrayParam> loaded, List<ArrayParam> stored) {

    /** The widest global access a thread issues (ld/st .v4 of 32-bit values, .v2 of 64-bit). */
    public static final int MAX_ACCESS_BYTES = 16;
    /** The narrowest vector access worth having. */
    public static final int MIN_ACCESS_BYTES = 8;

    public ElementwiseLoop {
        prologueBlocks = List.copyOf(prologueBlocks);
        body = List.copyOf(body);
        loaded = List.copyOf(loaded);
        stored = List.copyOf(stored);
    }

    /** The instructions before the loop, block after block. */
    public List<Insn> prologue() {
        return flatten(prologueBlocks);
    }

    /** Whether the code before the loop branches: {@link #prologueBlocks} then need their labels and terminators. */
    public boolean prologueBranches() {
        return branches(prologueBlocks);
    }

    /** Whether any of {@code prologue}'s blocks but the last (whose terminator is the loop test, which the forms replace) branches or returns. */
    private static boolean branches(List<Block> prologue) {
        return prologue.subList(0, prologue.size() - 1).stream().anyMatch(b -> !(b.terminator() instanceof Insn.Jump));
    }

    /** The bytes one vector access of {@code array} moves: {@code width} elements. */
    public int accessBytes(ArrayParam array) {
        return width * array.element().bytes();
    }

    /**
     * The pairs (an array the body loads after storing another, that array) that must not overlap
     * in memory for the vector form, which loads every array before it stores any; where they do,
     * the load must see the store, and only the scalar form keeps that order.
     */
    public List<List<ArrayParam>> mustLieApart() {
        List<List<ArrayParam>> pairs = new ArrayList<>();
        Map<String, ArrayParam> storedSoFar = new LinkedHashMap<>();
        Set<String> paired = new HashSet<>();
        for (Insn insn : body) {
            if (insn instanceof Insn.Store st) {
                storedSoFar.putIfAbsent(st.array().name(), st.array());
            } else if (insn instanceof Insn.Load l) {
                for (ArrayParam before : storedSoFar.values()) {
                    if (paired.add(l.array().name() + "\0" + before.name())) {
                        pairs.add(List.of(l.array(), before));
                    }
                }
            }
        }
        return pairs;
    }

    /** Loaded or stored, in no particular order but without repeats. */
    public Set<String> accessedArrays() {
        Set<String> names = new java.util.LinkedHashSet<>();
        loaded.forEach(a -> names.add(a.name()));
        stored.forEach(a -> names.add(a.name()));
        return names;
    }

    /** The element-wise loop of {@code ir}, or empty when it is not element-wise. */
    public static Optional<ElementwiseLoop> find(KernelIr ir) {
        try {
            return Optional.of(analyze(ir));
        } catch (NotElementwise e) {
            return Optional.empty();
        }
    }

    /** Why {@code ir} is not element-wise, or null when it is (for tests and diagnostics). */
    public static String rejection(KernelIr ir) {
        try {
            analyze(ir);
            return null;
        } catch (NotElementwise e) {
            return e.getMessage();
        }
    }

    private static final class NotElementwise extends Exception {
        NotElementwise(String why) {
            super(why, null, false, false);
        }
    }

    private static ElementwiseLoop analyze(KernelIr ir) throws NotElementwise {
        List<Block> blocks = ir.blocks();
        Set<Block> seen = new HashSet<>();

        // Straight-line code up to the first conditional branch: the loop entry test.
        List<Block> prologueBlocks = new ArrayList<>();
        Block b = blocks.getFirst();
        while (b.terminator() instanceof Insn.Jump j) {
            add(seen, prologueBlocks, b);
            b = j.target();
        }
        if (!(b.terminator() instanceof Insn.Branch)) {
            throw new NotElementwise("no loop");
        }
        // The first branch is the loop's entry test, unless the code before the loop branches (then the
        // one rotated loop test is, and every block up to it comes before the loop); a first branch
        // that looks like a loop test but is none keeps its own rejection below.
        List<Block> loops = blocks.stream().filter(ElementwiseLoop::rotated).toList();
        if (!rotated(b) && (loopHead((Insn.Branch) b.terminator()) == null || loops.size() == 1)) {
            b = loopEntry(loops);
            prologueBlocks.clear();
            prologueBlocks.addAll(branchyPrologue(blocks.getFirst(), b));
            seen.addAll(prologueBlocks);
        } else {
            add(seen, prologueBlocks, b);
        }
        Block entryTest = b;
        Insn.Branch test = (Insn.Branch) b.terminator();
        Block head = loopHead(test);
        Block exit = head == test.ifTrue() ? test.ifFalse() : test.ifTrue();
        seen.add(exit);

        // The body: blocks joined by jumps, the last one repeating the loop test (a rotated loop).
        List<Block> bodyBlocks = new ArrayList<>();
        b = head;
        while (b.terminator() instanceof Insn.Jump j) {
            add(seen, bodyBlocks, b);
            b = j.target();
        }
        add(seen, bodyBlocks, b);
        if (!test.equals(b.terminator())) {
            throw new NotElementwise("branches inside the loop body, or a loop test other than the rotated entry test");
        }
        if (seen.size() != blocks.size()) {
            throw new NotElementwise("control flow besides one straight-line loop");
        }

        // i < bound, whichever way the branch is written.
        Insn.Cond stay = head == test.ifTrue() ? test.cond() : test.cond().negate();
        Var index;
        Operand bound;
        if (stay == Insn.Cond.LT && test.a() instanceof Var v) {
            index = v;
            bound = test.b();
        } else if (stay == Insn.Cond.GT && test.b() instanceof Var v) {
            index = v;
            bound = test.a();
        } else {
            throw new NotElementwise("loop test is not index < bound");
        }
        if (index.type() != IrType.I32 || bound.type() != IrType.I32 || bound.equals(index)) {
            throw new NotElementwise("loop test is not index < bound on ints");
        }

        List<Insn> prologue = flatten(prologueBlocks);
        List<Insn> whole = flatten(bodyBlocks);
        checkPrologue(prologue, index);
        if (!entryTest.equals(prologueBlocks.getLast())) {
            throw new IllegalStateException("the loop test's block is not the prologue's last");
        }
        Block last = prologueBlocks.getLast();
        if (branches(prologueBlocks)
                && (last.insns().stream().noneMatch(i -> index.equals(def(i))) || last.insns().stream().noneMatch(i -> i instanceof Insn.Thread))) {
            // on every path to the loop, then
            throw new NotElementwise("loop index or global index set before the branches ahead of the loop");
        }

        // The body ends with the increment i += globalSize and the copy of the loop test.
        int step = -1;
        for (int k = 0; k < whole.size(); k++) {
            if (whole.get(k) instanceof Insn.Thread t) {
                if (step >= 0 || t.query() != Insn.ThreadQuery.GLOBAL_SIZE) {
                    throw new NotElementwise("thread query inside the loop body");
                }
                step = k;
            }
        }
        if (step < 0 || step + 1 >= whole.size() || !isIncrement(whole.get(step + 1), index, ((Insn.Thread) whole.get(step)).dst())) {
            throw new NotElementwise("loop without the grid-stride increment at its end");
        }
        List<Insn> body = whole.subList(0, step);
        List<Insn> retest = whole.subList(step + 2, whole.size());
        Set<Var> definedInLoop = new HashSet<>();
        for (Insn insn : whole) {
            Var d = def(insn);
            if (d != null) {
                definedInLoop.add(d);
            }
        }
        for (Insn insn : retest) {
            boolean invariant = switch (insn) {
                case Insn.ArrayLength l -> true;
                case Insn.Move m -> m.src() instanceof Const || !definedInLoop.contains((Var) m.src());
                default -> false;
            };
            if (!invariant) {
                throw new NotElementwise("loop test computes something other than array lengths: " + insn);
            }
        }
        if (bound instanceof Var bv) {
            for (Insn insn : body) {
                if (bv.equals(def(insn))) {
                    throw new NotElementwise("loop bound assigned inside the loop");
                }
            }
        }

        // The body proper: straight-line, accesses at exactly i, nothing carried between iterations.
        Map<String, ArrayParam> loaded = new LinkedHashMap<>();
        Map<String, ArrayParam> stored = new LinkedHashMap<>();
        Set<Var> bodyDefs = new HashSet<>();
        for (Insn insn : body) {
            Var d = def(insn);
            if (d != null) {
                bodyDefs.add(d);
            }
        }
        if (bodyDefs.contains(index)) {
            throw new NotElementwise("loop index assigned inside the loop body");
        }
        Set<Var> definedSoFar = new HashSet<>();
        for (Insn insn : body) {
            for (Operand u : uses(insn)) {
                if (u instanceof Var v && bodyDefs.contains(v) && !definedSoFar.contains(v)) {
                    throw new NotElementwise("value carried from one iteration to the next: " + v);
                }
            }
            switch (insn) {
                case Insn.Load l -> {
                    if (!index.equals(l.index())) {
                        throw new NotElementwise("load of " + l.array().name() + " at an index other than the loop index");
                    }
                    if (stored.containsKey(l.array().name())) {
                        throw new NotElementwise("load of " + l.array().name() + " after its store");
                    }
                    loaded.putIfAbsent(l.array().name(), l.array());
                }
                case Insn.Store s -> {
                    if (!index.equals(s.index())) {
                        throw new NotElementwise("store to " + s.array().name() + " at an index other than the loop index");
                    }
                    if (stored.putIfAbsent(s.array().name(), s.array()) != null) {
                        throw new NotElementwise("array " + s.array().name() + " stored twice");
                    }
                }
                case Insn.AtomicAdd a -> throw new NotElementwise("atomic add to " + a.array().name());
                case Insn.Move m -> {
                }
                case Insn.Binary x -> {
                }
                case Insn.Unary x -> {
                }
                case Insn.Fma x -> {
                }
                case Insn.Select x -> {
                }
                case Insn.Convert x -> {
                }
                case Insn.Compare3 x -> {
                }
                case Insn.ArrayLength x -> {
                }
                default -> throw new NotElementwise("instruction not allowed in an element-wise body: " + insn);
            }
            Var d = def(insn);
            if (d != null) {
                definedSoFar.add(d);
            }
        }
        if (loaded.isEmpty() && stored.isEmpty()) {
            throw new NotElementwise("no array accessed in the loop");
        }

        int widest = 0;
        int narrowest = Integer.MAX_VALUE;
        for (Map<String, ArrayParam> m : List.of(loaded, stored)) {
            for (ArrayParam a : m.values()) {
                widest = Math.max(widest, a.element().bytes());
                narrowest = Math.min(narrowest, a.element().bytes());
            }
        }
        int width = MAX_ACCESS_BYTES / widest;
        if (width * narrowest < MIN_ACCESS_BYTES) {
            throw new NotElementwise("element sizes " + narrowest + " and " + widest + " bytes admit no common vector width");
        }
        return new ElementwiseLoop(width, index, bound, boundArray(ir, bound), boundScalar(ir, bound), prologueBlocks, ownArraysInBounds(prologueBlocks), body,
                List.copyOf(loaded.values()), List.copyOf(stored.values()));
    }

    /** The loop's first body block where {@code test} is a loop's entry test (a bare return on its other side), else null. */
    private static Block loopHead(Insn.Branch test) {
        if (isBareReturn(test.ifTrue()) && !isBareReturn(test.ifFalse())) {
            return test.ifFalse();
        }
        if (isBareReturn(test.ifFalse()) && !isBareReturn(test.ifTrue())) {
            return test.ifTrue();
        }
        return null;
    }

    /**
     * Where the code before the loop branches: the one block whose test is a loop's entry test,
     * recognized by its rotated copy ({@link #rotated}; {@code found} the blocks that are).
     */
    private static Block loopEntry(List<Block> found) throws NotElementwise {
        if (found.size() > 1) {
            throw new NotElementwise("more than one loop");
        }
        if (found.isEmpty()) {
            throw new NotElementwise("no loop test with only a return after the loop and a body without branches back to it"
                    + " (branches inside the loop body?)");
        }
        return found.getFirst();
    }

    /** Whether {@code b} ends in a loop's entry test whose head runs through jumps to a copy of that test. */
    private static boolean rotated(Block b) {
        if (!(b.terminator() instanceof Insn.Branch t) || loopHead(t) == null) {
            return false;
        }
        Block c = loopHead(t);
        Set<Block> chain = new HashSet<>();
        while (c.terminator() instanceof Insn.Jump j && chain.add(c)) {
            c = j.target();
        }
        return c != b && t.equals(c.terminator());
    }

    /**
     * The blocks from {@code first} up to {@code entry} (the loop's entry test), which comes last:
     * every block reachable without passing that test, return blocks included. Refused where one
     * of them is reached from the loop, or it loops itself.
     */
    private static List<Block> branchyPrologue(Block first, Block entry) throws NotElementwise {
        List<Block> order = new ArrayList<>();
        Set<Block> done = new HashSet<>();
        Set<Block> onPath = new HashSet<>();
        visitBefore(first, entry, done, onPath, order);
        java.util.Collections.reverse(order); // reverse post-order: every block before the blocks it reaches
        order.remove(entry);
        order.add(entry); // it reaches none of them, and the form's loops follow it
        if (!order.stream().allMatch(b -> b == entry || isBareReturn(b) || reaches(b, entry, new HashSet<>()))) {
            throw new NotElementwise("control flow before the loop other than branches towards it or a return");
        }
        return order;
    }

    private static void visitBefore(Block b, Block entry, Set<Block> done, Set<Block> onPath, List<Block> order) throws NotElementwise {
        if (done.contains(b)) {
            return;
        }
        if (!onPath.add(b)) {
            throw new NotElementwise("a loop before the loop");
        }
        if (b != entry) {
            for (Block next : successors(b.terminator())) {
                visitBefore(next, entry, done, onPath, order);
            }
        }
        onPath.remove(b);
        done.add(b);
        order.add(b);
    }

    private static boolean reaches(Block from, Block to, Set<Block> seen) {
        if (from == to) {
            return true;
        }
        if (!seen.add(from)) {
            return false;
        }
        for (Block next : successors(from.terminator())) {
            if (reaches(next, to, seen)) {
                return true;
            }
        }
        return false;
    }

    private static List<Block> successors(Insn.Terminator t) {
        return switch (t) {
            case Insn.Jump j -> List.of(j.target());
            case Insn.Branch br -> List.of(br.ifTrue(), br.ifFalse());
            case Insn.Return r -> List.of();
        };
    }

    private static void add(Set<Block> seen, List<Block> to, Block b) throws NotElementwise {
        if (!seen.add(b)) {
            throw new NotElementwise("control flow besides one straight-line loop (block " + b + " reached twice)");
        }
        to.add(b);
    }

    private static boolean isBareReturn(Block b) {
        return b.insns().isEmpty() && b.terminator() instanceof Insn.Return;
    }

    private static List<Insn> flatten(List<Block> blocks) {
        List<Insn> all = new ArrayList<>();
        blocks.forEach(b -> all.addAll(b.insns()));
        return all;
    }

    /** Before the loop: no access of memory other threads see, one thread query, and the index set to 0 + global index. */
    private static void checkPrologue(List<Insn> prologue, Var index) throws NotElementwise {
        Var gid = null;
        int indexDefs = 0;
        for (Insn insn : prologue) {
            switch (insn) {
                case Insn.Load l -> throw new NotElementwise("array access before the loop");
                case Insn.Store s -> throw new NotElementwise("array access before the loop");
                case Insn.AtomicAdd a -> throw new NotElementwise("array access before the loop");
                case Insn.Atomic a -> throw new NotElementwise("array access before the loop");
                // a thread's own arrays and tables (a StrictMath function's) may be used: no other thread sees them
                case Insn.ArrayLoad a -> ownArray(a.array());
                case Insn.ArrayStore a -> ownArray(a.array());
                case Insn.ArrayZero a -> ownArray(a.array());
                case Insn.Barrier a -> throw new NotElementwise("barrier");
                case Insn.WarpReduce a -> throw new NotElementwise("warp reduction");
                case Insn.Thread t -> {
                    if (gid != null || t.query() != Insn.ThreadQuery.GLOBAL_IDX || t.dim() != 0) {
                        throw new NotElementwise("thread query before the loop other than the loop start");
                    }
                    gid = t.dst();
                }
                default -> {
                }
            }
            if (index.equals(def(insn))) {
                indexDefs++;
                Const zero = Const.ofInt(0);
                if (!(insn instanceof Insn.Binary add && add.op() == Insn.BinOp.ADD && gid != null
                        && ((zero.equals(add.a()) && gid.equals(add.b())) || (gid.equals(add.a()) && zero.equals(add.b()))))) {
                    throw new NotElementwise("loop index does not start at 0 + global index");
                }
            }
        }
        if (indexDefs != 1) {
            throw new NotElementwise("loop index does not start at 0 + global index");
        }
    }

    /**
     * See {@link #ownArraysInBounds()}: each access's index, where it is a variable, is followed to
     * the assignments that reach the access along the prologue's paths (a variable may be reused:
     * {@code StrictMath.pow}'s {@code k} indexes its tables, later holds an exponent).
     */
    private static boolean ownArraysInBounds(List<Block> blocks) {
        // the assignments of each variable that reach each block's end; blocks come before the blocks they reach
        Map<Block, Map<Var, Set<Insn>>> out = new HashMap<>();
        for (Block b : blocks) {
            Map<Var, Set<Insn>> reaching = new HashMap<>();
            for (Block p : blocks) {
                if (out.containsKey(p) && successors(p.terminator()).contains(b)) {
                    out.get(p).forEach((v, defs) -> reaching.computeIfAbsent(v, x -> new HashSet<>()).addAll(defs));
                }
            }
            for (Insn insn : b.insns()) {
                boolean within = switch (insn) {
                    case Insn.ArrayLoad a -> within(a.index(), a.array().length(), reaching);
                    case Insn.ArrayStore a -> within(a.index(), a.array().length(), reaching);
                    default -> true;
                };
                if (!within) {
                    return false;
                }
                Var d = def(insn);
                if (d != null) {
                    reaching.put(d, new HashSet<>(Set.of(insn)));
                }
            }
            out.put(b, reaching);
        }
        return true;
    }

    /** Whether {@code index} is such a constant, or a variable whose every assignment in {@code reaching} moves one in. */
    private static boolean within(Operand index, int length, Map<Var, Set<Insn>> reaching) {
        if (index instanceof Var v) {
            Set<Insn> defs = reaching.getOrDefault(v, Set.of());
            return !defs.isEmpty() && defs.stream().allMatch(d -> d instanceof Insn.Move m && constantWithin(m.src(), length));
        }
        return constantWithin(index, length);
    }

    /** Whether {@code index} is an int constant in {@code [0, length)}. */
    private static boolean constantWithin(Operand index, int length) {
        return index instanceof Const c && c.type() == IrType.I32 && c.bits() >= 0 && c.bits() < length;
    }

    private static void ownArray(io.gradsync.tasks.compiler.ir.MemArray a) throws NotElementwise {
        if (a.space() == io.gradsync.tasks.compiler.ir.MemArray.Space.GROUP) {
            throw new NotElementwise("group-local array before the loop");
        }
    }

    private static boolean isIncrement(Insn insn, Var index, Var globalSize) {
        return insn instanceof Insn.Binary add && add.op() == Insn.BinOp.ADD && index.equals(add.dst())
                && ((index.equals(add.a()) && globalSize.equals(add.b())) || (globalSize.equals(add.a()) && index.equals(add.b())));
    }

    /**
     * The array whose length {@code bound} is, following copies: every definition of the variable
     * is the length of that one array (the loop test is repeated, so it has several).
     */
    private static Optional<String> boundArray(KernelIr ir, Operand bound) {
        List<Insn> defs = root(ir, bound).map(v -> definitions(ir, v)).orElse(List.of());
        if (defs.isEmpty() || !defs.stream().allMatch(d -> d instanceof Insn.ArrayLength)) {
            return Optional.empty();
        }
        Set<String> arrays = new HashSet<>();
        defs.forEach(d -> arrays.add(((Insn.ArrayLength) d).array().name()));
        return arrays.size() == 1 ? Optional.of(arrays.iterator().next()) : Optional.empty();
    }

    /** The scalar parameter {@code bound} is, following copies, where nothing in the kernel assigns it. */
    static Optional<String> boundScalar(KernelIr ir, Operand bound) {
        return root(ir, bound).filter(v -> definitions(ir, v).isEmpty()).flatMap(v -> ir.params().stream()
                .filter(p -> p instanceof KernelParam.ScalarParam s && s.var().equals(v)).map(KernelParam::name).findFirst());
    }

    /** The variable {@code bound} copies (itself where it is not one copy of another), following at most 8 copies. */
    private static Optional<Var> root(KernelIr ir, Operand bound) {
        Operand o = bound;
        for (int depth = 0; depth < 8 && o instanceof Var v; depth++) {
            List<Insn> defs = definitions(ir, v);
            if (defs.size() != 1 || !(defs.getFirst() instanceof Insn.Move m)) {
                return Optional.of(v);
            }
            o = m.src();
        }
        return Optional.empty();
    }

    private static List<Insn> definitions(KernelIr ir, Var v) {
        List<Insn> defs = new ArrayList<>();
        for (Block b : ir.blocks()) {
            for (Insn insn : b.insns()) {
                if (v.equals(def(insn))) {
                    defs.add(insn);
                }
            }
        }
        return defs;
    }

    /** The variable an instruction assigns, or null. */
    public static Var def(Insn insn) {
        return switch (insn) {
            case Insn.Move m -> m.dst();
            case Insn.Binary b -> b.dst();
            case Insn.Unary u -> u.dst();
            case Insn.Fma f -> f.dst();
            case Insn.Select x -> x.dst();
            case Insn.Convert c -> c.dst();
            case Insn.Compare3 c -> c.dst();
            case Insn.Load l -> l.dst();
            case Insn.ArrayLength l -> l.dst();
            case Insn.Thread t -> t.dst();
            case Insn.ArrayLoad l -> l.dst();
            case Insn.Atomic a -> a.dst();
            case Insn.WarpReduce w -> w.dst();
            case Insn.Store s -> null;
            case Insn.AtomicAdd a -> null;
            case Insn.ArrayStore s -> null;
            case Insn.ArrayZero z -> null;
            case Insn.Barrier b -> null;
            case Insn.Terminator t -> null;
        };
    }

    /** The operands an instruction reads. */
    public static List<Operand> uses(Insn insn) {
        return switch (insn) {
            case Insn.Move m -> List.of(m.src());
            case Insn.Binary b -> List.of(b.a(), b.b());
            case Insn.Unary u -> List.of(u.a());
            case Insn.Fma f -> List.of(f.a(), f.b(), f.c());
            case Insn.Select x -> List.of(x.a(), x.b(), x.ifTrue(), x.ifFalse());
            case Insn.Convert c -> List.of(c.src());
            case Insn.Compare3 c -> List.of(c.a(), c.b());
            case Insn.Load l -> List.of(l.index());
            case Insn.Store s -> List.of(s.index(), s.value());
            case Insn.AtomicAdd a -> List.of(a.index(), a.value());
            case Insn.Atomic a -> java.util.stream.Stream.of(a.index(), a.value(), a.expected()).filter(java.util.Objects::nonNull).toList();
            case Insn.ArrayLoad l -> List.of(l.index());
            case Insn.ArrayStore st -> List.of(st.index(), st.value());
            case Insn.ArrayZero z -> List.of();
            case Insn.Barrier b -> List.of();
            case Insn.WarpReduce w -> List.of(w.value());
            case Insn.ArrayLength l -> List.of();
            case Insn.Thread t -> List.of();
            case Insn.Branch br -> List.of(br.a(), br.b());
            case Insn.Jump j -> List.of();
            case Insn.Return r -> List.of();
        };
    }
}
