"""Stream and CUDA-graph steps the torch GPU tests share (torch is passed in: this module imports
nothing that CI lacks)."""


def run_behind_a_busy_stream(torch, how, call):
    """call(stream) on a new stream that a sleep kernel keeps busy: how = "current" runs call(None)
    under torch.cuda.stream, "object" and "int" pass the stream object or its handle. Checks that
    the call neither waited for the stream nor ran on the default stream; returns the stream (still
    busy: synchronise it before reading the result)."""
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # keep s busy: the kernel queues behind it
        if how == "current":
            call(None)
    if how == "object":
        call(s)
    elif how == "int":
        call(s.cuda_stream)
    assert not s.query(), "the call waited for the stream"
    assert torch.cuda.default_stream().query(), "the call ran on the default stream"
    return s


def capture(torch, step):
    """step() warmed up twice on a side stream (first-call work stays out of the graph), then one
    call captured: (the CUDA graph, what the captured call returned)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        result = step()
    return g, result
