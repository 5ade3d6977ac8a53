/**
 * The optimization stage, on target-neutral IR after the lowering: {@code ConstantFolding}
 * computes instructions of constants in Java, {@code CopyPropagation} removes the copies inlining
 * leaves, {@code SingleRounding} folds a rounding to odd into the 16-bit store after it, and
 * {@code ElementwiseLoop} finds the element-wise kernels a back end may vectorize, and
 * {@code AdjacentLoads} the loads of adjacent elements (from a proven multiple of their count) that
 * it may merge into one vector load, from {@code IndexOffsets} (an index known as another plus a
 * constant within a block, which the PTX emitter's addresses use too). Folding an index offset into an address is the PTX emitter's
 * ({@code Addresses}): it depends on the target's addressing modes.
 */
package io.gradsync.tasks.compiler.optimize;
