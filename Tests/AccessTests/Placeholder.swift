// placeholder until the rules tests land
