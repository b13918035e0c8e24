extension String {
    /// This camel-case name in snake case: `placeDistanceKm` → `place_distance_km`.
    package var snakeCased: String {
        reduce(into: "") { snake, character in
            if character.isUppercase { snake += "_" + character.lowercased() } else { snake.append(character) }
        }
    }
}
