package dev.hccl.tools.launch;

import dev.hccl.tools.TokenFile;

import java.nio.file.Path;
import java.util.Map;

/**
 * Where a launch's job token comes from. Never the command line, which {@code ps} shows every user: the launcher's
 * {@code HCCL_JOB_TOKEN}, or a file ({@code --token-file}) that only its owner, the user who launches, can read
 * ({@link TokenFile}). A job of one launcher may make its own ({@link RankEnvironment#jobToken}); the launchers of a
 * job of several nodes must share one, so there it is required.
 */
final class JobTokens
{
    private JobTokens()
    {
    }

    /**
     * A launch's token and where it came from.
     *
     * @param value the token.
     * @param file  the {@code --token-file} it was read from, absolute; null when it was not.
     * @param made  whether the launcher made it, so that nobody else knows it ({@link PrivateTokenFile}).
     */
    record Token(String value, Path file, boolean made)
    {
    }

    /**
     * The fewest characters a token given to a launch may have: one a stranger who can reach the store cannot guess in
     * a job's life (the store answers a wrong guess slowly), nor a sniffer offline (the key is stretched).
     */
    static final int MIN_TOKEN_CHARS = 16;

    /**
     * The token of this launch.
     *
     * @param env    the launcher's environment.
     * @param file   {@code --token-file}, or null.
     * @param shared whether other launchers (on other nodes) must give their ranks the same token.
     * @return the token.
     * @throws IllegalArgumentException what is wrong, and what to do.
     */
    static Token resolve(final Map<String, String> env, final Path file, final boolean shared)
    {
        if (file != null)
        {
            return new Token(strong(TokenFile.read(file), "the token in --token-file " + file,
                "openssl rand -hex 16 > " + file), file.toAbsolutePath(), false);
        }
        final String inherited = env.get("HCCL_JOB_TOKEN");
        final boolean made = inherited == null || inherited.isBlank();
        if (!made)
        {
            strong(inherited.strip(), "HCCL_JOB_TOKEN", "export HCCL_JOB_TOKEN=$(openssl rand -hex 16)");
        }
        if (shared && made)
        {
            throw new IllegalArgumentException("the launchers of a job of several nodes must give their ranks one "
                + "token: set HCCL_JOB_TOKEN to the same secret for every node's hcclrun (openssl rand -hex 16), or "
                + "give --token-file FILE, a file only you can read (chmod 600); never a command-line argument");
        }
        return new Token(RankEnvironment.jobToken(env), null, made);
    }

    private static String strong(final String token, final String what, final String instead)
    {
        if (token.length() < MIN_TOKEN_CHARS)
        {
            throw new IllegalArgumentException(what + " has " + token.length() + " character"
                + (token.length() == 1 ? "" : "s") + ", which whoever can reach the job's ports may guess: use at "
                + "least " + MIN_TOKEN_CHARS + " random ones (" + instead + ")");
        }
        return token;
    }
}
