package dev.hccl.bench.step;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The gradient lists against the published parameter counts of the models, and their registration order. */
class ModelGradientsTest
{
    @Test
    void resnet50HasTorchvisionsTensorsAndParameters()
    {
        final ModelGradients m = ModelGradients.resnet50();
        // sum(p.numel() for p in torchvision.models.resnet50().parameters()) == 25,557,032; 161 tensors.
        assertEquals(161, m.tensorCount());
        assertEquals(25_557_032L, m.totalElements());
        final List<Parameter> p = m.parameters();
        assertEquals(new Parameter("conv1.weight", 64, 3, 7, 7), p.get(0));
        assertEquals(new Parameter("layer1.0.downsample.0.weight", 256, 64, 1, 1), p.get(12));
        assertEquals(new Parameter("layer4.2.conv3.weight", 2048, 512, 1, 1), p.get(156));
        assertEquals(new Parameter("fc.weight", 1000, 2048), p.get(159));
        assertEquals(new Parameter("fc.bias", 1000), p.get(160));
        assertEquals(53, p.stream().filter(t -> t.shape().length == 4).count(), "convolutions");
    }

    @Test
    void bertBaseHasHuggingFacesTensorsAndParameters()
    {
        final ModelGradients m = ModelGradients.bertBase();
        // BertModel.from_pretrained("bert-base-uncased"): 199 tensors, 109,482,240 parameters with the pooler.
        assertEquals(199, m.tensorCount());
        assertEquals(109_482_240L, m.totalElements());
        final List<Parameter> p = m.parameters();
        assertEquals(new Parameter("embeddings.word_embeddings.weight", 30_522, 768), p.get(0));
        assertEquals(new Parameter("encoder.layer.0.attention.self.query.weight", 768, 768), p.get(5));
        assertEquals(new Parameter("encoder.layer.11.output.LayerNorm.bias", 768), p.get(196));
        assertEquals(new Parameter("pooler.dense.bias", 768), p.get(198));
        assertEquals(23_837_184L, p.subList(0, 5).stream().mapToLong(Parameter::elements).sum(), "embeddings");
        assertEquals(7_087_872L, p.subList(5, 21).stream().mapToLong(Parameter::elements).sum(), "one layer");
    }

    @Test
    void namesPickTheModelsAndTinyIsSmall()
    {
        assertEquals("bert-base", ModelGradients.named("BERT-base").name());
        assertEquals(13, ModelGradients.named("tiny").tensorCount());
        assertTrue(ModelGradients.tiny().totalElements() < 1 << 20);
        assertArrayEquals(new long[]{64, 3, 7, 7}, ModelGradients.resnet50().parameters().get(0).shape());
        assertEquals(9408L, ModelGradients.resnet50().elementCounts()[0]);
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> ModelGradients.named("gpt-5"));
        assertTrue(ex.getMessage().contains("resnet50"), ex.getMessage());
    }
}
