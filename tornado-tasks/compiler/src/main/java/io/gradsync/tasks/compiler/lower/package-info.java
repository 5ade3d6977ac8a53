/**
 * The lowering: {@code JavaSemantics} writes Java's results into the IR wherever a target's own
 * instruction differs (integer division, {@code abs} of MIN, shift counts, float min and max,
 * float-to-integer casts), once for every target, so that the emitters translate plainly.
 */
package io.gradsync.tasks.compiler.lower;
