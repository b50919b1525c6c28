"""`torch.layout` and `torch.memory_format`, and their named values (`torch.strided`,
`torch.sparse_coo`, `torch.channels_last`, ...)."""


class layout:
    """Matches `torch.layout`: how a tensor's elements are stored (`torch.strided`)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name  # pickled by name, as `torch.strided`


class memory_format:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


strided = layout("strided")
# jtorch tensors are strided; the other layouts exist to be compared with (`t.layout !=
# torch.strided`) and named in arguments.
sparse_coo, sparse_csr, sparse_csc = (
    layout("sparse_coo"),
    layout("sparse_csr"),
    layout("sparse_csc"),
)
sparse_bsr, sparse_bsc, _mkldnn, jagged = (
    layout("sparse_bsr"),
    layout("sparse_bsc"),
    layout("_mkldnn"),
    layout("jagged"),
)
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
