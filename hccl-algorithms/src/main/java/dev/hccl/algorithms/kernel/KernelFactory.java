package dev.hccl.algorithms.kernel;

/**
 * Makes the kernels of one non-scalar {@link KernelFamily}.
 * <p>
 * This interface is the only thing {@link Reducers} knows of a family whose classes need an optional module: an
 * implementation is loaded reflectively, and only once that module is known to be present, so that neither it nor
 * the kernels it creates are ever linked on a JVM that lacks the module.
 */
interface KernelFactory
{
    /**
     * The kernel to use for the scalar kernel's data type and operator.
     *
     * @param scalar the scalar kernel, which the returned kernel may delegate to for tails and special cases.
     * @return a kernel of this family, or {@code scalar} itself where this family has nothing faster.
     */
    AbstractReducer kernel(AbstractReducer scalar);

    /**
     * A short description of the family on this JVM, for the log: vector width and the like.
     *
     * @return the description.
     */
    String description();
}
