def forward(x):
    return x * 2
