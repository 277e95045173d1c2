package dev.hccl.algorithms;

/**
 * Algorithms from outside this module, found with {@link java.util.ServiceLoader} (a
 * {@code META-INF/services/dev.hccl.algorithms.AlgorithmPlugin} file) when the installed catalog is first built. Every
 * rank must load the same plug-ins, as every rank must run the same algorithm.
 * <p>
 * An algorithm implements the SPI interface of each operation it runs ({@link dev.hccl.api.spi.AllReduceAlgorithm}
 * and so on); {@code HCCL_ALGO} can then force it by name. The cost model also weighs it when it implements
 * {@link CostedAlgorithm}, within the {@link AutoLimits} it is registered with.
 */
public interface AlgorithmPlugin
{
    /**
     * Adds this plug-in's algorithms.
     *
     * @param catalog the catalog being built;
     *                {@link AlgorithmCatalog#register(String, dev.hccl.api.spi.CollectiveAlgorithm, AutoLimits)}.
     */
    void register(AlgorithmCatalog catalog);
}
