plugins {
    id("com.android.library")
}

android {
    namespace = "dev.herald.android"
    compileSdk = 34

    defaultConfig {
        minSdk = 21
        consumerProguardFiles("consumer-rules.pro")
    }

    compileOptions {
        sourceCompatibility = JavaVersion.VERSION_1_8
        targetCompatibility = JavaVersion.VERSION_1_8
    }

    // The JVM tests here run against android-stubs (Maven build); under Gradle use Robolectric or
    // instrumented tests instead.
    sourceSets["test"].java.setSrcDirs(emptyList<String>())
}

dependencies {
    api(project(":herald-core"))
    implementation(platform("com.google.firebase:firebase-bom:33.1.2"))
    implementation("com.google.firebase:firebase-messaging")
}
