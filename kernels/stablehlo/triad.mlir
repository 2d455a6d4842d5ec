// triad.mlir - the StableHLO program the pjrt backend of the probe compiles:
// c = a + 3 * b over N floats, checked on the host.  A template: the probe
// writes the element count it chose for the device (a working set sized for
// a memory bandwidth) in place of every {{N}} before it compiles.
module @xlaunch_probe_triad {
  func.func public @main(%a: tensor<{{N}}xf32>, %b: tensor<{{N}}xf32>) -> tensor<{{N}}xf32> {
    %s = stablehlo.constant dense<3.000000e+00> : tensor<{{N}}xf32>
    %sb = stablehlo.multiply %s, %b : tensor<{{N}}xf32>
    %c = stablehlo.add %a, %sb : tensor<{{N}}xf32>
    return %c : tensor<{{N}}xf32>
  }
}
