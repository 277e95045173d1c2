package dev.hccl.api;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The values of one {@link CommConfig}'s settings and their provenance: each resolved once, on first use, from the
 * builder, else the environment (its variable, then other launchers' spellings, then what a launcher's pair of
 * variables implies), else the default, with where it came from; and the account of them that
 * {@link CommConfig#describe()} logs.
 */
final class SettingValues
{
    /** A resolved value, where it came from, and which variable gave it. */
    private record Resolved(Object value, CommConfig.Source source, String variable)
    {
    }

    private final Map<String, String> env;
    private final Map<Setting<?>, Object> explicit;
    /** The rank/world-size pair another launcher gave, when torchrun's variables are absent; or null. */
    private final LaunchEnvironment launch;
    private final Map<Setting<?>, Resolved> resolved = new ConcurrentHashMap<>();

    /**
     * @param env      the environment to read.
     * @param explicit the values set on the builder, copied.
     */
    SettingValues(final Map<String, String> env, final Map<Setting<?>, Object> explicit)
    {
        this.env = env;
        this.explicit = Map.copyOf(explicit);
        launch = LaunchEnvironment.read(env);
    }

    /** @return the environment read. */
    Map<String, String> env()
    {
        return env;
    }

    /** @return the values set on the builder. */
    Map<Setting<?>, Object> explicit()
    {
        return explicit;
    }

    /**
     * Refuses a launcher's pair of variables half set ({@code RANK} without {@code WORLD_SIZE}, say).
     *
     * @throws HcclException {@link ErrorCode#E_ENV}, naming the one missing.
     */
    void checkLaunch()
    {
        if (null != launch)
        {
            final String problem = launch.problem(explicit.containsKey(CommConfig.RANK),
                explicit.containsKey(CommConfig.WORLD_SIZE));
            if (null != problem)
            {
                throw new HcclException(ErrorCode.E_ENV, problem);
            }
        }
    }

    /** A setting's value, resolved once. */
    @SuppressWarnings("unchecked")
    <T> T get(final Setting<T> setting)
    {
        return (T)resolve(setting).value();
    }

    /** Where a setting's value came from. */
    CommConfig.Source source(final Setting<?> setting)
    {
        return resolve(setting).source();
    }

    /**
     * Every one of {@code listed} and every other setting resolved so far, with where each came from.
     *
     * @param listed the library's settings, first and in order.
     * @return variable = value (source), secrets hidden.
     */
    Map<String, String> describe(final List<Setting<?>> listed)
    {
        final Map<String, String> out = new LinkedHashMap<>();
        for (final Setting<?> s : listed)
        {
            out.put(s.variable(), describe(s));
        }
        for (final Setting<?> s : resolved.keySet())
        {
            out.putIfAbsent(s.variable(), describe(s));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private <T> String describe(final Setting<T> s)
    {
        final Resolved r = resolve(s);
        final String text = s.show((T)r.value());
        switch (r.source())
        {
            case CONFIG:
                return text + " (config)";
            case ENVIRONMENT:
                return text + " (env " + r.variable() + ")";
            default:
                return text + " (default)";
        }
    }

    private Resolved resolve(final Setting<?> setting)
    {
        final Resolved known = resolved.get(setting);
        if (null != known)
        {
            return known;
        }
        if (null != setting.base())
        {
            resolve(setting.base()); // first, so that reading this one updates the map no more
        }
        return resolved.computeIfAbsent(setting, this::read);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Resolved read(final Setting<?> s)
    {
        final Setting raw = s;
        if (null != s.base())
        {
            final Resolved base = resolve(s.base());
            return new Resolved(s.readFrom(base.value()), base.source(), base.variable());
        }
        if (explicit.containsKey(s))
        {
            final Object value = explicit.get(s);
            raw.check(s.variable(), value);
            return new Resolved(value, CommConfig.Source.CONFIG, s.variable());
        }
        final List<String> names = new ArrayList<>(s.variables());
        if (null != launch && (s == CommConfig.RANK || s == CommConfig.WORLD_SIZE))
        {
            final String other = s == CommConfig.RANK ? launch.rankVariable : launch.sizeVariable;
            if (null != other)
            {
                names.add(other);
            }
        }
        for (final String name : names)
        {
            final String text = env.get(name);
            if (null != text && !text.isBlank())
            {
                return new Resolved(s.parse(name, text), CommConfig.Source.ENVIRONMENT, name);
            }
        }
        final LaunchEnvironment.Derived derived = null == launch ? null : launch.derive(s, env);
        if (null != derived)
        {
            return new Resolved(s.parse(derived.variable(), derived.text()), CommConfig.Source.ENVIRONMENT,
                derived.variable());
        }
        return new Resolved(s.defaultValue(), CommConfig.Source.DEFAULT, s.variable());
    }
}
