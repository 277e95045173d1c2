package dev.hccl.algorithms;

import dev.hccl.api.Operation;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The cost formulas of FullMeshAlgorithm and HalvingDoublingAlgorithm, as their Javadoc states them. */
class CostedAlgorithmsTest
{
    private static final double ALPHA = 1e-5;
    private static final double BETA = 1e-9;
    private static final double GAMMA = 1e-10;
    private static final CostParameters COST = new CostParameters(ALPHA, BETA, GAMMA);
    private static final double EPSILON = 1e-15;

    @Test
    void fullMeshIsOneLatencyAndNMinusOneCopies()
    {
        final FullMeshAlgorithm mesh = new FullMeshAlgorithm();
        assertEquals(ALPHA + 3 * 1000 * (BETA + GAMMA), mesh.predictSeconds(Operation.ALL_REDUCE, 4, 1000, COST),
            EPSILON);
        assertEquals(0, mesh.predictSeconds(Operation.ALL_REDUCE, 1, 1000, COST));
        assertThrows(IllegalArgumentException.class, () -> mesh.predictSeconds(Operation.ALL_GATHER, 4, 1000, COST));
    }

    @Test
    void halvingDoublingAtPowersOfTwoAndWithTheFold()
    {
        final HalvingDoublingAlgorithm hd = new HalvingDoublingAlgorithm();
        final double m = 8000;
        // n = 8: 3 steps each way, 7/8 of the data each way, 7/8 reduced.
        assertEquals(6 * ALPHA + 2 * 7.0 / 8 * m * BETA + 7.0 / 8 * m * GAMMA,
            hd.predictSeconds(Operation.ALL_REDUCE, 8, (long)m, COST), EPSILON);
        // n = 6 folds onto 4: the fold and unfold add two whole-buffer transfers and one reduction.
        assertEquals(4 * ALPHA + 2 * 3.0 / 4 * m * BETA + 3.0 / 4 * m * GAMMA + 2 * ALPHA + 2 * m * BETA + m * GAMMA,
            hd.predictSeconds(Operation.ALL_REDUCE, 6, (long)m, COST), EPSILON);
        assertEquals(3 * ALPHA + 7.0 / 8 * m * BETA, hd.predictSeconds(Operation.ALL_GATHER, 8, (long)m, COST),
            EPSILON);
        assertEquals(3 * ALPHA + 7.0 / 8 * m * (BETA + GAMMA),
            hd.predictSeconds(Operation.REDUCE_SCATTER, 8, (long)m, COST), EPSILON);
        assertTrue(hd.predictSeconds(Operation.ALL_REDUCE, 5, (long)m, COST) >
            hd.predictSeconds(Operation.ALL_REDUCE, 4, (long)m, COST));
        assertThrows(IllegalArgumentException.class, () -> hd.predictSeconds(Operation.BROADCAST, 8, 1000, COST));
    }
}
