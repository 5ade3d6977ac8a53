package io.gradsync.tasks.compiler.ir;

import io.gradsync.tasks.compiler.ir.KernelParam.ArrayParam;

/** IR instructions: three-address form over {@link Var}s, one basic block ends in a {@link Terminator}. */
public sealed interface Insn {

    /**
     * Binary operations. {@code MIN} and {@code MAX} of floats are Java's ({@code Math.min}: NaN
     * if either is NaN, -0.0 below 0.0) until the lowering; after it, only the target's IEEE
     * minimum or maximum of two numbers that are not equal and not NaN.
     */
    enum BinOp { ADD, SUB, MUL, DIV, REM, AND, OR, XOR, SHL, SHR, USHR, MIN, MAX }

    enum UnOp {
        NEG, ABS, SQRT,
        /** int (low 16 bits) -> float, from bf16 bits. */
        BF16_BITS_TO_F32,
        /** float -> int holding the sign-extended bf16 bits, rounded to nearest even. */
        F32_TO_BF16_BITS,
        HALF_BITS_TO_F32, F32_TO_HALF_BITS,
        /**
         * double -> float rounded to odd: the float toward zero, its last bit set when that is not
         * exact ({@code HalfFloats.roundToOdd}), so that rounding it on to a 16-bit type rounds once.
         */
        F64_TO_F32_ODD,
        /** Reinterpret bits between same-width int and float types. */
        BITCAST
    }

    /**
     * Conversions. Float to int truncates toward zero; the front end's conversion follows Java
     * (saturating, NaN to 0), and after the lowering it is only the target's truncation, which
     * then sees NaN and out-of-range values only in results the lowering selects away.
     */
    enum ConvOp { I2L, I2F, I2D, L2I, L2F, L2D, F2I, F2L, F2D, D2I, D2L, D2F, I2B, I2S, I2C }

    /** Thread coordinates of the KernelContext style. */
    enum ThreadQuery { GLOBAL_IDX, GLOBAL_SIZE, LOCAL_IDX, GROUP_IDX, LOCAL_SIZE, GROUP_COUNT }

    record Move(Var dst, Operand src) implements Insn {
    }

    record Binary(BinOp op, Var dst, Operand a, Operand b) implements Insn {
    }

    record Unary(UnOp op, Var dst, Operand a) implements Insn {
    }

    record Fma(Var dst, Operand a, Operand b, Operand c) implements Insn {
    }

    /**
     * {@code dst = (a cond b) ? ifTrue : ifFalse}: what the lowering writes Java's special cases
     * with, no branch needed. Integers compare signed; floats compare ordered (false when either
     * is NaN, so {@code x == x} tests for a number), and {@code NE}, whose C operator is unordered,
     * is refused for them.
     */
    record Select(Var dst, Cond cond, Operand a, Operand b, Operand ifTrue, Operand ifFalse) implements Insn {
        public Select {
            if (a.type() != b.type()) {
                throw new IllegalArgumentException("select compares operands of one type, got " + a.type() + " and " + b.type());
            }
            if (a.type().isFloat() && cond == Cond.NE) {
                throw new IllegalArgumentException("a float select compares ordered: NE is not one (negate EQ instead)");
            }
        }
    }

    record Convert(ConvOp op, Var dst, Operand src) implements Insn {
    }

    /**
     * Java's three-way compare ({@code lcmp}, {@code fcmpl/g}, {@code dcmpl/g}): -1, 0 or 1, and
     * {@code nanResult} when either float operand is NaN.
     */
    record Compare3(Var dst, Operand a, Operand b, int nanResult) implements Insn {
    }

    /** {@code dst = array[index]}; half kinds widen to F32 unless {@code rawBits} (then sign-extended I32). */
    record Load(Var dst, ArrayParam array, Operand index, boolean rawBits) implements Insn {
    }

    /**
     * {@code array[index] = value}; half kinds round from F32 unless {@code rawBits}, or once from
     * F64 where {@code SingleRounding} folded a rounding to odd into the store.
     */
    record Store(ArrayParam array, Operand index, Operand value, boolean rawBits) implements Insn {
    }

    /** Atomic {@code array[index] += value}. */
    record AtomicAdd(ArrayParam array, Operand index, Operand value) implements Insn {
    }

    record ArrayLength(Var dst, ArrayParam array) implements Insn {
    }

    /** A thread coordinate in dimension {@code dim} (0, 1, 2 for x, y, z). */
    record Thread(ThreadQuery query, int dim, Var dst) implements Insn {
        public Thread(ThreadQuery query, Var dst) {
            this(query, 0, dst);
        }
    }

    /** {@code dst = array[index]} on an in-kernel array. */
    record ArrayLoad(Var dst, MemArray array, Operand index) implements Insn {
    }

    /** {@code array[index] = value} on an in-kernel array; narrow Java types are truncated as Java stores do. */
    record ArrayStore(MemArray array, Operand index, Operand value) implements Insn {
    }

    /** Sets every element of a private array to zero: what {@code new T[n]} gives in Java, each time it runs. */
    record ArrayZero(MemArray array) implements Insn {
    }

    /**
     * {@code dst} = the sum ({@code max} false) or Java's max of {@code value} over the 32
     * consecutive threads of the group this thread is in, added as a butterfly (offsets 16, 8, 4,
     * 2, 1), the same bits in every lane. Every thread of the group takes part, as at a barrier.
     */
    record WarpReduce(boolean max, Var dst, Operand value) implements Insn {
    }

    /** Waits until every thread of the work group arrives; {@code global} also orders global memory. */
    record Barrier(boolean global) implements Insn {
    }

    enum AtomicOp { ADD, MAX, MIN, EXCHANGE, COMPARE_EXCHANGE, LOAD, STORE }

    /** Memory ordering of an atomic; the names and meanings of {@code java.lang.invoke.VarHandle}'s modes. */
    enum Order { RELAXED, ACQUIRE, RELEASE, ACQ_REL, SEQ_CST }

    /** Which threads an atomic is atomic for, and ordered with. */
    enum Scope { GROUP, DEVICE, SYSTEM }

    /**
     * An atomic on {@code array[index]}: {@code dst} (null for STORE) gets the old value;
     * {@code value} is the operand (the new value for EXCHANGE, COMPARE_EXCHANGE and STORE,
     * unused for LOAD), {@code expected} only for COMPARE_EXCHANGE, which compares bits.
     */
    record Atomic(AtomicOp op, Var dst, ArrayParam array, Operand index, Operand value, Operand expected,
                  Scope scope, Order order) implements Insn {
    }

    /** Ends a basic block. */
    sealed interface Terminator extends Insn {
    }

    record Jump(Block target) implements Terminator {
    }

    /**
     * Branch on {@code a cond b}. For float operands {@code unorderedTaken} says whether the branch
     * is taken when either operand is NaN (Java's fcmpl/fcmpg + if combination decides it).
     */
    record Branch(Cond cond, Operand a, Operand b, boolean unorderedTaken, Block ifTrue, Block ifFalse) implements Terminator {
    }

    record Return() implements Terminator {
    }

    enum Cond {
        EQ, NE, LT, GE, GT, LE;

        public Cond negate() {
            return switch (this) {
                case EQ -> NE;
                case NE -> EQ;
                case LT -> GE;
                case GE -> LT;
                case GT -> LE;
                case LE -> GT;
            };
        }

        /** The condition on swapped operands. */
        public Cond swap() {
            return switch (this) {
                case EQ, NE -> this;
                case LT -> GT;
                case GE -> LE;
                case GT -> LT;
                case LE -> GE;
            };
        }

        public boolean test(int c) {
            return switch (this) {
                case EQ -> c == 0;
                case NE -> c != 0;
                case LT -> c < 0;
                case GE -> c >= 0;
                case GT -> c > 0;
                case LE -> c <= 0;
            };
        }
    }
}
