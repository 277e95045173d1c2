package dev.hccl.tools.launch;

import java.util.BitSet;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code hcclrun --local-ranks-filter}, as torchrun's: the ranks of this launcher, numbered from 0 as they start,
 * whose output is shown, such as {@code 0} or {@code 0,2-3}. The others' output is hidden ({@link HiddenOutput}).
 */
final class RankFilter
{
    private static final Pattern ITEM = Pattern.compile("(\\d{1,9})(?:-(\\d{1,9}))?");

    private RankFilter()
    {
    }

    /**
     * The ranks whose output a filter hides.
     *
     * @param spec  the filter: local ranks and ranges, comma-separated.
     * @param ranks how many ranks this launcher starts.
     * @return the local ranks not named, in order; empty when the filter names them all.
     * @throws IllegalArgumentException what is wrong with the filter, and what it may name.
     */
    static Set<Integer> hidden(final String spec, final int ranks)
    {
        final BitSet shown = new BitSet(ranks);
        for (final String item : spec.split(",", -1))
        {
            final Matcher m = ITEM.matcher(item.strip());
            if (!m.matches())
            {
                throw new IllegalArgumentException("--local-ranks-filter takes local ranks and ranges of them, such "
                    + "as 0 or 0,2-3, not '" + spec + "'");
            }
            final int first = Integer.parseInt(m.group(1));
            final int last = m.group(2) == null ? first : Integer.parseInt(m.group(2));
            if (first > last)
            {
                throw new IllegalArgumentException("--local-ranks-filter: the range " + item.strip() + " is empty; "
                    + "write it lowest first (" + last + "-" + first + ")");
            }
            if (last >= ranks)
            {
                throw new IllegalArgumentException("--local-ranks-filter names local rank " + last + ", but this "
                    + "hcclrun starts " + ranks + " rank(s), local ranks 0.." + (ranks - 1));
            }
            shown.set(first, last + 1);
        }
        final Set<Integer> hidden = new TreeSet<>();
        for (int r = shown.nextClearBit(0); r < ranks; r = shown.nextClearBit(r + 1))
        {
            hidden.add(r);
        }
        return hidden;
    }
}
