package dev.hccl.bench.step;

import java.util.List;
import java.util.Locale;

/**
 * A model's gradient list: one gradient per parameter tensor, in registration (forward) order, the order in which
 * PyTorch DDP registers them; a backward pass produces them roughly in reverse. The lists are derived from the
 * architectures, as torchvision and Hugging Face Transformers define them, not copied from a table.
 *
 * @param name       the model's name on the command line.
 * @param parameters the parameter tensors, in registration order.
 */
public record ModelGradients(String name, List<Parameter> parameters)
{
    /** The names {@link #named} takes. */
    public static final List<String> NAMES = List.of("resnet50", "bert-base", "tiny");

    /**
     * @param name       the model's name.
     * @param parameters at least one tensor.
     */
    public ModelGradients
    {
        parameters = List.copyOf(parameters);
        if (parameters.isEmpty())
        {
            throw new IllegalArgumentException("model " + name + " has no parameters");
        }
    }

    /**
     * @param name one of {@link #NAMES}, in any case.
     * @return that model's gradient list.
     * @throws IllegalArgumentException for another name, listing the valid ones.
     */
    public static ModelGradients named(final String name)
    {
        return switch (name.toLowerCase(Locale.ROOT))
        {
            case "resnet50" -> resnet50();
            case "bert-base" -> bertBase();
            case "tiny" -> tiny();
            default -> throw new IllegalArgumentException("unknown model '" + name + "'; choose one of " + NAMES);
        };
    }

    /**
     * torchvision's {@code resnet50()}: a 7x7 stem, four stages of 3, 4, 6 and 3 bottleneck blocks (1x1, 3x3, 1x1
     * convolutions, expansion 4, a 1x1 projection in each stage's first block), each convolution without bias and
     * followed by a batch norm, then a 1000-way linear classifier.
     *
     * @return its 161 parameter tensors.
     */
    public static ModelGradients resnet50()
    {
        final int[] blocks = {3, 4, 6, 3};
        final int expansion = 4;
        final ParameterList p = new ParameterList().conv("conv1", 3, 64, 7).norm("bn1", 64);
        long in = 64;
        for (int stage = 0; stage < blocks.length; stage++)
        {
            final long planes = 64L << stage;
            for (int block = 0; block < blocks[stage]; block++)
            {
                final String b = "layer" + (stage + 1) + "." + block;
                p.conv(b + ".conv1", in, planes, 1).norm(b + ".bn1", planes)
                    .conv(b + ".conv2", planes, planes, 3).norm(b + ".bn2", planes)
                    .conv(b + ".conv3", planes, planes * expansion, 1).norm(b + ".bn3", planes * expansion);
                if (block == 0)
                {
                    p.conv(b + ".downsample.0", in, planes * expansion, 1).norm(b + ".downsample.1",
                        planes * expansion);
                }
                in = planes * expansion;
            }
        }
        p.linear("fc", in, 1000);
        return new ModelGradients("resnet50", p.build());
    }

    /**
     * Hugging Face's {@code BertModel} for {@code bert-base-uncased}, pooler included: word (30,522), position (512)
     * and token-type (2) embeddings of 768 and their layer norm; 12 layers, each with query, key, value and output
     * projections of 768, a layer norm, a 3,072-wide feed-forward pair and a second layer norm; the pooler's 768x768
     * linear layer. The masked-language-model head, which ties its weights to the word embeddings, is not included.
     *
     * @return its 199 parameter tensors.
     */
    public static ModelGradients bertBase()
    {
        final long vocabulary = 30_522;
        final long hidden = 768;
        final long intermediate = 3072;
        final ParameterList p = new ParameterList()
            .embedding("embeddings.word_embeddings", vocabulary, hidden)
            .embedding("embeddings.position_embeddings", 512, hidden)
            .embedding("embeddings.token_type_embeddings", 2, hidden)
            .norm("embeddings.LayerNorm", hidden);
        for (int layer = 0; layer < 12; layer++)
        {
            final String l = "encoder.layer." + layer;
            p.linear(l + ".attention.self.query", hidden, hidden)
                .linear(l + ".attention.self.key", hidden, hidden)
                .linear(l + ".attention.self.value", hidden, hidden)
                .linear(l + ".attention.output.dense", hidden, hidden)
                .norm(l + ".attention.output.LayerNorm", hidden)
                .linear(l + ".intermediate.dense", hidden, intermediate)
                .linear(l + ".output.dense", intermediate, hidden)
                .norm(l + ".output.LayerNorm", hidden);
        }
        p.linear("pooler.dense", hidden, hidden);
        return new ModelGradients("bert-base", p.build());
    }

    /**
     * A small convolutional network for tests: small and large tensors alike, 13 in all.
     *
     * @return its parameter tensors.
     */
    public static ModelGradients tiny()
    {
        final ParameterList p = new ParameterList().conv("conv1", 3, 16, 3).norm("bn1", 16)
            .conv("conv2", 16, 32, 3).norm("bn2", 32)
            .conv("conv3", 32, 64, 3).norm("bn3", 64)
            .linear("fc1", 64 * 4 * 4, 128).linear("fc2", 128, 10);
        return new ModelGradients("tiny", p.build());
    }

    /**
     * @return the number of parameter tensors, and so of gradients.
     */
    public int tensorCount()
    {
        return parameters.size();
    }

    /**
     * @return each gradient's elements, in registration order.
     */
    public long[] elementCounts()
    {
        return parameters.stream().mapToLong(Parameter::elements).toArray();
    }

    /**
     * @return the model's parameters: the sum of the tensors' elements.
     */
    public long totalElements()
    {
        return parameters.stream().mapToLong(Parameter::elements).sum();
    }
}
