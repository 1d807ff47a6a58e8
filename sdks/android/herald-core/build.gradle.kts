// Plain Java 8: java.*, HttpURLConnection and org.json (the Android platform provides org.json).
plugins {
    `java-library`
}

java {
    sourceCompatibility = JavaVersion.VERSION_1_8
    targetCompatibility = JavaVersion.VERSION_1_8
}

dependencies {
    // Android's own org.json; on a device the platform's copy is used.
    compileOnly("com.vaadin.external.google:android-json:0.0.20131108.vaadin1")
    testImplementation("com.vaadin.external.google:android-json:0.0.20131108.vaadin1")
    testImplementation("junit:junit:4.13.2")
}

tasks.test {
    systemProperty("herald.fixtures", file("../../fixtures").absolutePath)
}
