package dev.hccl.core.op;

import dev.hccl.algorithms.AlgorithmCatalog;
import dev.hccl.api.ErrorCode;
import dev.hccl.api.HcclException;

import java.util.ServiceConfigurationError;

/** The algorithms installed in this JVM, which {@code HCCL_ALGO} names and the selector chooses among. */
final class InstalledAlgorithms
{
    private InstalledAlgorithms()
    {
    }

    /**
     * The installed algorithms (this module's and the plug-ins'), built once and shared: they hold no state of their
     * own. A plug-in that fails to load fails every {@code init} alike, naming it.
     *
     * @return the catalog.
     * @throws HcclException {@link ErrorCode#E_ENV} when a plug-in could not be loaded or registered.
     */
    static AlgorithmCatalog catalog()
    {
        if (Installed.CATALOG instanceof AlgorithmCatalog catalog)
        {
            return catalog;
        }
        final Throwable failure = (Throwable)Installed.CATALOG;
        throw new HcclException(ErrorCode.E_ENV, "the algorithm catalog could not be built: " + failure, failure);
    }

    /** Holds the installed catalog, or why it could not be built. */
    private static final class Installed
    {
        static final Object CATALOG = build();

        private static Object build()
        {
            try
            {
                return AlgorithmCatalog.installed();
            }
            catch (final RuntimeException | ServiceConfigurationError | LinkageError ex)
            {
                return ex;
            }
        }
    }
}
