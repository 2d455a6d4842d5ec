// triad.mlir - the StableHLO program the pjrt backend of the probe compiles:
// c = a + 3 * b over 8 Mi floats (32 MiB per array), checked on the host.
module @xlaunch_probe_triad {
  func.func public @main(%a: tensor<8388608xf32>, %b: tensor<8388608xf32>) -> tensor<8388608xf32> {
    %s = stablehlo.constant dense<3.000000e+00> : tensor<8388608xf32>
    %sb = stablehlo.multiply %s, %b : tensor<8388608xf32>
    %c = stablehlo.add %a, %sb : tensor<8388608xf32>
    return %c : tensor<8388608xf32>
  }
}
