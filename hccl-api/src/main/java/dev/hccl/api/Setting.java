package dev.hccl.api;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One setting, defined once: the environment variable that sets it (and other launchers' variables read when that
 * one is absent), how its text is read, its default, which values are valid, and what it does. {@link CommConfig}
 * resolves every setting the same way: a value set on the builder, else the environment, else the default. The
 * library's own settings are {@link CommConfig}'s constants; a transport owns its settings and lists them in
 * {@link dev.hccl.api.spi.TransportProvider#settings()}.
 *
 * @param <T> the value's type.
 */
public final class Setting<T>
{
    private final String variable;
    private final List<String> fallbacks;
    private final T defaultValue;
    private final Function<String, T> parser;
    private final Predicate<T> valid;
    private final String rule;
    private final String description;
    private final boolean secret;
    /** The setting this one reads its value from, or null for one read from its own text. */
    private final Setting<?> base;
    /** What makes this setting's value of the base's; null when {@link #base} is. */
    private final Function<Object, T> reading;

    private Setting(
        final String variable, final List<String> fallbacks, final T defaultValue, final Function<String, T> parser,
        final Predicate<T> valid, final String rule, final String description, final boolean secret)
    {
        this(variable, fallbacks, defaultValue, parser, valid, rule, description, secret, null, null);
    }

    private Setting(
        final String variable, final List<String> fallbacks, final T defaultValue, final Function<String, T> parser,
        final Predicate<T> valid, final String rule, final String description, final boolean secret,
        final Setting<?> base, final Function<Object, T> reading)
    {
        this.base = base;
        this.reading = reading;
        this.variable = Objects.requireNonNull(variable, "variable");
        this.fallbacks = List.copyOf(fallbacks);
        this.defaultValue = defaultValue;
        this.parser = parser;
        this.valid = valid;
        this.rule = rule;
        this.description = description;
        this.secret = secret;
    }

    /**
     * A setting read by {@code parser}, valid when {@code valid} holds.
     *
     * @param variable     the environment variable.
     * @param defaultValue the value when unset; null for none.
     * @param parser       text to value; throws {@link IllegalArgumentException} saying what the text must be.
     * @param valid        which values are valid.
     * @param rule         the rule, in words, for the error ("in [0, 64]").
     * @param description  what it does, one sentence.
     * @param <T>          the value's type.
     * @return the setting.
     */
    public static <T> Setting<T> of(
        final String variable, final T defaultValue, final Function<String, T> parser, final Predicate<T> valid,
        final String rule, final String description)
    {
        return new Setting<>(variable, List.of(), defaultValue, parser, valid, rule, description, false);
    }

    /**
     * An integer in {@code [min, max]}.
     *
     * @param variable     the environment variable.
     * @param defaultValue the default.
     * @param min          the least valid value.
     * @param max          the greatest valid value.
     * @param description  what it does.
     * @return the setting.
     */
    public static Setting<Integer> integer(
        final String variable, final int defaultValue, final int min, final int max, final String description)
    {
        return of(variable, defaultValue, Setting::parseInteger, v -> v >= min && v <= max,
            "in [" + min + ", " + max + "]", description);
    }

    /**
     * An integer's text read, for an integer setting's parser.
     *
     * @param text the text.
     * @return the integer.
     * @throws IllegalArgumentException saying it must be an integer.
     */
    public static Integer parseInteger(final String text)
    {
        try
        {
            return Integer.parseInt(text);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("must be an integer");
        }
    }

    /**
     * Free text, unset by default unless {@code defaultValue} says otherwise.
     *
     * @param variable     the environment variable.
     * @param defaultValue the default, or null.
     * @param description  what it does.
     * @return the setting.
     */
    public static Setting<String> text(final String variable, final String defaultValue, final String description)
    {
        return of(variable, defaultValue, Function.identity(), v -> !v.isEmpty(), "non-empty", description);
    }

    /**
     * A switch, off by default: {@code 1} or {@code true} turns it on, {@code 0} or {@code false} off.
     *
     * @param variable    the environment variable.
     * @param description what it does.
     * @return the setting.
     */
    public static Setting<Boolean> flag(final String variable, final String description)
    {
        return flag(variable, false, description);
    }

    /**
     * A switch with a default: {@code 1} or {@code true} turns it on, {@code 0} or {@code false} off.
     *
     * @param variable     the environment variable.
     * @param defaultValue whether it is on when unset.
     * @param description  what it does.
     * @return the setting.
     */
    public static Setting<Boolean> flag(final String variable, final boolean defaultValue, final String description)
    {
        return of(variable, defaultValue, text ->
        {
            if ("1".equals(text) || "true".equalsIgnoreCase(text))
            {
                return true;
            }
            if ("0".equals(text) || "false".equalsIgnoreCase(text))
            {
                return false;
            }
            throw new IllegalArgumentException("must be 1 or 0 (true or false)");
        }, v -> true, "", description);
    }

    /**
     * A positive duration, written in seconds (fractions allowed).
     *
     * @param variable     the environment variable.
     * @param defaultValue the default.
     * @param description  what it does.
     * @return the setting.
     */
    public static Setting<Duration> seconds(
        final String variable, final Duration defaultValue, final String description)
    {
        return of(variable, defaultValue, text ->
        {
            final double seconds;
            try
            {
                seconds = Double.parseDouble(text);
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("must be a number of seconds");
            }
            if (!(seconds > 0 && seconds < 1e9))
            {
                throw new IllegalArgumentException("must be a positive number of seconds");
            }
            return Duration.ofNanos((long)(seconds * 1e9));
        }, d -> !d.isNegative() && !d.isZero(), "positive", description);
    }

    /**
     * This setting's value read as a richer type, once per configuration: {@link CommConfig#get} resolves this setting
     * (builder, environment, default), applies {@code reading} to its value and keeps the result, with this setting's
     * source. For a value whose reading needs what only another module knows (the algorithms that {@code HCCL_ALGO}
     * may name, say), so that it is read once and code compares values, never text.
     *
     * @param reading the value (null when unset) to the typed value; throws {@link IllegalArgumentException} saying
     *                what is wrong.
     * @param <U>     the typed value's type.
     * @return a new setting, of the same variable, that is not set by itself.
     */
    @SuppressWarnings("unchecked")
    public <U> Setting<U> readAs(final Function<? super T, ? extends U> reading)
    {
        return new Setting<>(variable, fallbacks, null, null, v -> true, "", description, secret, this,
            v -> reading.apply((T)v));
    }

    /** @return the setting this one is read from ({@link #readAs}), or null. */
    Setting<?> base()
    {
        return base;
    }

    /** @return this setting's value of its base's value ({@link #readAs}). */
    T readFrom(final Object baseValue)
    {
        return reading.apply(baseValue);
    }

    /**
     * This setting, also read from {@code names} (in that order) when its own variable is absent: another
     * launcher's spelling of it.
     *
     * @param names the other variables.
     * @return a new setting.
     */
    public Setting<T> alsoReading(final String... names)
    {
        return new Setting<>(variable, List.of(names), defaultValue, parser, valid, rule, description, secret, base,
            reading);
    }

    /**
     * This setting, its value never shown in logs and descriptions.
     *
     * @return a new setting.
     */
    public Setting<T> secret()
    {
        return new Setting<>(variable, fallbacks, defaultValue, parser, valid, rule, description, true, base, reading);
    }

    /**
     * The environment variable.
     *
     * @return its name, such as {@code HCCL_IO_THREADS}.
     */
    public String variable()
    {
        return variable;
    }

    /**
     * The variables read, in order: {@link #variable()}, then other launchers' spellings.
     *
     * @return the names.
     */
    public List<String> variables()
    {
        final java.util.ArrayList<String> all = new java.util.ArrayList<>(1 + fallbacks.size());
        all.add(variable);
        all.addAll(fallbacks);
        return all;
    }

    /**
     * The value when nothing sets it.
     *
     * @return the default, or null for none.
     */
    public T defaultValue()
    {
        return defaultValue;
    }

    /**
     * What the setting does.
     *
     * @return one sentence.
     */
    public String description()
    {
        return description;
    }

    /**
     * Reads a variable's text.
     *
     * @param name the variable it came from, for the error.
     * @param text the text, not blank.
     * @return the value.
     * @throws IllegalArgumentException naming the variable, what it must be and what it got.
     */
    public T parse(final String name, final String text)
    {
        final T value;
        try
        {
            value = parser.apply(text.trim());
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(name + " " + ex.getMessage() + ", got '" + text + "'", ex);
        }
        check(name, value);
        return value;
    }

    /**
     * Checks a value.
     *
     * @param name  what set it, for the error.
     * @param value the value.
     * @throws IllegalArgumentException naming the setting, the rule and the value.
     */
    public void check(final String name, final T value)
    {
        if (null == value || !valid.test(value))
        {
            throw new IllegalArgumentException(name + " must be " + rule + ", got " + show(value));
        }
    }

    /**
     * A value as logs may show it.
     *
     * @param value the value.
     * @return its text, {@code <set>} for a secret, {@code unset} for null.
     */
    public String show(final T value)
    {
        if (null == value)
        {
            return "unset";
        }
        if (secret)
        {
            return "<set>";
        }
        if (value instanceof Duration)
        {
            return ((Duration)value).toMillis() / 1000.0 + " s";
        }
        if (value instanceof Enum)
        {
            return ((Enum<?>)value).name().toLowerCase(Locale.ROOT);
        }
        return value.toString();
    }

    @Override
    public String toString()
    {
        return variable;
    }
}
