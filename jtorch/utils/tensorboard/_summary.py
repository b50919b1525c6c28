"""Summary protocol buffers, built as PyTorch's `torch.utils.tensorboard.summary` builds
them (same tags, fields, histogram buckets and PNG encoding), from jtorch tensors, numpy
arrays or Python numbers."""

from __future__ import annotations

import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._tensor import Tensor


def make_np(x) -> np.ndarray:
    """A value as numpy (a Python number becomes a 1-element array, as in PyTorch)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        from ... import _dtype

        t = x.detach()
        if t.dtype is _dtype.bfloat16:
            t = t.to(_dtype.float16)
        return t.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(tag: str, value, new_style: bool = False, double_precision: bool = False):
    arr = make_np(value).squeeze()
    if arr.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given "
            f"size: {arr.size} and {arr.ndim} dimensions."
        )
    v = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    proto = (
        TensorProto(double_val=[v], dtype="DT_DOUBLE")
        if double_precision
        else TensorProto(float_val=[v], dtype="DT_FLOAT")
    )
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=meta)])


def default_bins() -> list:
    """TensorFlow's histogram buckets: ±1e-12 growing by 10% up to 1e20, and 0."""
    pos, v = [], 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


def histogram(tag: str, values, bins, max_bins=None):
    values = make_np(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        # merge neighbouring buckets, padding the last group with empty ones
        group = len(counts) // max_bins
        rest = len(counts) % group
        if rest:
            counts = np.pad(counts, (0, group - rest))
        counts = counts.reshape(-1, group).sum(-1)
        limits = np.concatenate([limits[:-1:group], limits[-1:]])
    # keep the buckets from the first non-empty one to the last, with one empty bucket
    # before (histogram.cc's layout, which TensorBoard expects)
    filled = np.flatnonzero(counts > 0)
    first, last = (int(filled[0]), int(filled[-1])) if filled.size else (0, len(counts) - 1)
    counts = (
        counts[first - 1 : last + 1] if first > 0 else np.concatenate([[0], counts[: last + 1]])
    )
    limits = limits[first : last + 2]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    proto = HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )
    return Summary(value=[Summary.Value(tag=tag, histo=proto)])


def _grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """N images (NCHW, 1 or 3 channels) tiled row by row, 8 per row, into one CHW image."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        r, c = divmod(i, ncols)
        canvas[:, r * h : (r + 1) * h, c * w : (c + 1) * w] = images[i]
    return canvas


def to_hwc(arr: np.ndarray, dataformats: str) -> np.ndarray:
    fmt = dataformats.upper()
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {dataformats}"
        )
    if arr.ndim != len(dataformats):
        raise AssertionError(
            f"size of input tensor and input format are different. tensor "
            f"shape: {arr.shape}, input_format: {dataformats}"
        )
    if len(fmt) == 4:
        return _grid(arr.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = arr.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    hw = arr.transpose([fmt.find(c) for c in "HW"])
    return np.stack([hw] * 3, 2)


def image(tag: str, img, dataformats: str = "NCHW", rescale: float = 1):
    """A PNG image summary: floats in [0, 1] scaled by 255 (uint8 kept), clipped."""
    from PIL import Image

    arr = to_hwc(make_np(img), dataformats)
    scale = 1 if arr.dtype == np.uint8 else 255
    arr = (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = arr.shape
    picture = Image.fromarray(arr).resize(
        (int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS
    )
    buf = io.BytesIO()
    picture.save(buf, format="PNG")
    proto = Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=buf.getvalue()
    )
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def text(tag: str, text_string: str):
    meta = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()
        )
    )
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[text_string.encode("utf_8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


# dtype name -> (TensorProto dtype, field); PyTorch's table (uint8 listed last there wins;
# bfloat16 values are stored as float16 bit patterns, as PyTorch stores them)
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val"),
    "bfloat16": ("DT_BFLOAT16", "half_val"),
    "float32": ("DT_FLOAT", "float_val"),
    "float64": ("DT_DOUBLE", "double_val"),
    "int8": ("DT_INT8", "int_val"),
    "int16": ("DT_INT16", "int_val"),
    "int32": ("DT_INT32", "int_val"),
    "int64": ("DT_INT64", "int64_val"),
    "uint8": ("DT_UINT8", "uint32_val"),
    "bool": ("DT_BOOL", "bool_val"),
    "complex64": ("DT_COMPLEX64", "scomplex_val"),
    "complex128": ("DT_COMPLEX128", "dcomplex_val"),
}


def tensor(tag: str, t):
    """The whole tensor as a TensorProto (`add_tensor`)."""
    if t.numel() * t.element_size() >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    name = t.dtype._name
    if name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {t.dtype}")
    dtype, field = _TENSOR_FIELDS[name]
    arr = make_np(t).reshape(-1)
    if field == "half_val":
        values = arr.astype(np.float16).view(np.uint16).tolist()
    elif field in ("scomplex_val", "dcomplex_val"):
        values = np.stack([arr.real, arr.imag], -1).reshape(-1).tolist()
    else:
        values = arr.tolist()
    proto = TensorProto(
        dtype=dtype,
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in t.shape]),
        **{field: values},
    )
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The hparams plugin's three summaries: experiment, session start, session end."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import (
        HParamsPluginData,
        SessionEndInfo,
        SessionStartInfo,
    )

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    discrete = hparam_domain_discrete or {}
    if not isinstance(discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in discrete.items():
        if (
            k not in hparam_dict
            or not isinstance(v, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in v)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                f"type as hparam_dict[{k}]."
            )
    infos, start = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # PyTorch's order: numbers first, so a bool is logged as a number (bool is an int)
        if isinstance(v, (int, float)):
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
        elif isinstance(v, str):
            field, kind = "string_value", "DATA_TYPE_STRING"
        elif isinstance(v, Tensor):
            v, field, kind = make_np(v)[0], "number_value", "DATA_TYPE_FLOAT64"
            setattr(start.hparams[k], field, v)
            infos.append(HParamInfo(name=k, type=DataType.Value(kind)))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        setattr(start.hparams[k], field, v)
        domain = (
            struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in discrete[k]])
            if k in discrete
            else None
        )
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    def plugin_summary(tag, **content):
        data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
        meta = SummaryMetadata(
            plugin_data=SummaryMetadata.PluginData(
                plugin_name=metadata.PLUGIN_NAME, content=data.SerializeToString()
            )
        )
        return Summary(value=[Summary.Value(tag=tag, metadata=meta)])

    experiment = Experiment(
        hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    )
    return (
        plugin_summary(metadata.EXPERIMENT_TAG, experiment=experiment),
        plugin_summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
        plugin_summary(
            metadata.SESSION_END_INFO_TAG,
            session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")),
        ),
    )
