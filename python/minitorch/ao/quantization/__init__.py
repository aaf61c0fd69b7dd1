"""``minitorch.ao.quantization`` (``torch.ao.quantization``; also ``minitorch.quantization``):
eager-mode quantization workflows: observers, fake quantization, qconfigs, module fusion,
``prepare``/``convert`` (post-training static), ``prepare_qat`` (quantization-aware training)
and ``quantize_dynamic``. See docs/quantization.md."""
from .fake_quantize import (FakeQuantize, FakeQuantizeBase, FixedQParamsFakeQuantize,  # noqa: F401
                            FusedMovingAvgObsFakeQuantize, default_fake_quant, default_fused_act_fake_quant,
                            default_fused_per_channel_wt_fake_quant, default_fused_wt_fake_quant,
                            default_per_channel_weight_fake_quant, default_weight_fake_quant, disable_fake_quant,
                            disable_observer, enable_fake_quant, enable_observer)
from .fuse_modules import (fuse_conv_bn, fuse_conv_bn_eval, fuse_conv_bn_relu, fuse_conv_bn_weights,  # noqa: F401
                           fuse_known_modules, fuse_linear_bn, fuse_linear_bn_eval, fuse_modules, fuse_modules_qat,
                           get_fuser_method)
from .observer import (HistogramObserver, MinMaxObserver, MovingAverageMinMaxObserver,  # noqa: F401
                       MovingAveragePerChannelMinMaxObserver, NoopObserver, ObserverBase, PerChannelMinMaxObserver,
                       PlaceholderObserver, UniformQuantizationObserverBase, default_debug_observer,
                       default_dynamic_quant_observer, default_float_qparams_observer, default_histogram_observer,
                       default_observer, default_per_channel_weight_observer, default_placeholder_observer,
                       default_weight_observer, get_observer_state_dict, weight_observer_range_neg_127_to_127)
from .qconfig import (QConfig, default_activation_only_qconfig, default_dynamic_qconfig,  # noqa: F401
                      default_per_channel_qconfig, default_qat_qconfig, default_qconfig, default_weight_only_qconfig,
                      float16_dynamic_qconfig, float_qparams_weight_only_qconfig, get_default_qat_qconfig,
                      get_default_qconfig, get_default_qconfig_dict, per_channel_dynamic_qconfig)
from .qconfig_mapping import QConfigMapping, get_default_qat_qconfig_mapping, get_default_qconfig_mapping  # noqa: F401
from .quantization_mappings import (get_default_dynamic_quant_module_mappings,  # noqa: F401
                                    get_default_qat_module_mappings, get_default_qconfig_propagation_list,
                                    get_default_static_quant_module_mappings)
from .quantize import (add_quant_dequant, convert, default_eval_fn, prepare, prepare_qat,  # noqa: F401
                       propagate_qconfig_, quantize, quantize_dynamic, quantize_qat, swap_module)
from .stubs import DeQuantStub, QuantStub, QuantWrapper  # noqa: F401
