package dev.hccl.bench.check;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** SelfCheck's arguments: element counts, or none for the default ones; anything else is named. */
class SelfCheckTest
{
    @Test
    void countsAreParsedAndNoneGivesTheDefaults()
    {
        assertArrayEquals(new int[]{0, 1, 7, 1000}, SelfCheck.counts(new String[]{"0", "1", "7", "1000"}));
        assertArrayEquals(new int[]{0, 1, 7, 1000, 100_003}, SelfCheck.counts(new String[0]));
    }

    @Test
    void anythingButACountIsNamedWithWhatToGive()
    {
        for (final String bad : new String[]{"--bogus", "-1", "1e3", "99999999999"})
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> SelfCheck.counts(new String[]{"7", bad}));
            assertEquals("'" + bad + "' is not an element count; give counts >= 0, such as 0 1 7 1000, or none for " +
                "the default ones", ex.getMessage());
        }
    }
}
